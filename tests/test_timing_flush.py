"""The CPU flush between timed trials stays on the calling thread.

A flush on torch's intra-op pool needs a second core between every two trials; where the judge's and
the runner's pools share a small machine, that wait fell on the runner's loop and not on the judge's
and an honest candidate failed the clock check."""

import os
import subprocess
import sys

import pytest

PROBE = """
import os, torch
from engine.verify.wire.timing import Flusher
torch.set_num_threads(2)
flush = Flusher("cpu", 32 * 2**20)
flush.buffer.numpy().fill(7)
before = len(os.listdir("/proc/self/task"))
for _ in range(5):
    flush()
after = len(os.listdir("/proc/self/task"))
print(before, after, int(flush.buffer.abs().sum()))
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2, reason="needs /proc and 2 cores")
def test_the_cpu_flush_clears_its_buffer_without_starting_torchs_thread_pool():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    before, after, left = (int(v) for v in out.stdout.split())
    assert left == 0, "the flush did not overwrite its whole buffer"
    assert after == before, "the flush started torch's intra-op threads"
