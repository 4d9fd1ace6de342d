"""Caches the output by tensor pointer and shape (a fast 'second call'). Caught by: runtime 'result-caching'."""
import torch

_CACHE = {}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        key = (x.data_ptr(), tuple(x.shape))
        if key not in _CACHE:
            _CACHE[key] = x * (x > 0)
        return _CACHE[key]
