"""Computes the right answer slowly (2 ms a call) and patches the runner's timing module so its clock reads
almost nothing: a 100x speedup claimed. The judge's own clock must see through it."""
import os
import time

import torch

timing = os.sys.modules.get("engine.wire.timing")
if timing is not None:
    real = timing._perf_counter
    base = real()

    def fast_clock():  # a clock that runs at a hundredth of the real speed
        return base + (real() - base) * 0.01

    timing._perf_counter = fast_clock
    timing._event_elapsed = lambda start, end: 0.001


class ModelNew(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.002)
        return x * (x > 0)
