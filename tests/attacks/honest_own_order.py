"""An honest control for behave_when_profiled.py: the same result in an order of its own (the row means of
b first, then one dot product per row of a), on every call alike."""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        means = b.sum(1) / b.shape[1]
        return (a * means).sum(1)
