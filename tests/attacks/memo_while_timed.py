"""Works honestly until it is timed, then remembers its answer for every input tensor it meets (a timed call
on the same tensor returns the first answer): correctness calls see a correct candidate, timing sees a
fast one. Each honest call sleeps 2 ms. Every timed call's values must be fresh, and any may be checked."""
import sys
import time

import torch

_MEMO = {}


def _timed() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "time_block":
            return True
        frame = frame.f_back
    return False


class ModelNew(torch.nn.Module):
    def forward(self, x):
        if _timed():
            key = x.data_ptr()
            if key not in _MEMO:
                time.sleep(0.002)
                _MEMO[key] = x * (x > 0)
            return _MEMO[key]
        time.sleep(0.002)
        return x * (x > 0)
