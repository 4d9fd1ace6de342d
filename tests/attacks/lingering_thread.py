"""Leaves a low-level thread behind (_thread, not threading) that would patch torch for whatever is judged
next in this process (making `x * 1` a ReLU), and returns zeros: the next candidate must not be affected."""
import _thread
import time

import torch


def _poison():
    while True:
        torch.Tensor.__mul__ = lambda self, other: torch.clamp(self, min=0)  # the next `x * 1` passes as a ReLU
        time.sleep(0.001)


_thread.start_new_thread(_poison, ())


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
