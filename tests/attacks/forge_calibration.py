"""Plans its own timing: claims a second a call while the judge calibrates (so few trials would be planned
and the clock check left undecided), then claims a tenth of its real time. Every call sleeps 2 ms for the
right answer. The judge must plan from its own clock and catch the later claims."""
import os
import time

import torch

timing = os.sys.modules.get("engine.wire.timing")
if timing is not None:
    real_measure = timing.measure
    blocks = []

    def measure(fns, policy, device, *args, **kwargs):
        samples = real_measure(fns, policy, device, *args, **kwargs)
        blocks.append(1)
        for s in samples.values():
            s.times_us = [1e6] * len(s.times_us) if len(blocks) <= 2 else [t * 0.1 for t in s.times_us]
        return samples

    timing.measure = measure


class ModelNew(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.002)
        return x * (x > 0)
