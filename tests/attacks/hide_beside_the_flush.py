"""Hides about 1.3 ms of work a call (the answer and a busy loop) inside the room the clock check leaves for
the loop's own overhead (the cache flush): its timer counts 15 µs of every call, so it claims several times
the eager baseline's speed. The judge must see the hidden time on its own clock, with the full CPU flush in
the loop."""
import os
import time

import torch

timing = os.sys.modules.get("engine.wire.timing")
hidden = [0.0]
if timing is not None:
    real = timing._perf_counter
    timing._perf_counter = lambda: real() - hidden[0]


class ModelNew(torch.nn.Module):
    def forward(self, x):
        start = time.perf_counter()
        while time.perf_counter() - start < 0.001:
            pass
        out = x * (x > 0)
        hidden[0] += max(time.perf_counter() - start - 15e-6, 0.0)
        return out
