"""What each untimed step around a timed call costs on the GPU, and what a block of timed calls costs a call.

A timed call's own time is a fraction of what a timing spends: the fresh inputs written before it, the
flush, the copy of its outputs kept after it, the chunk digests committed at the end of its block, and the
outputs of correctness calls moved through host memory. This prints each step's median (device µs by CUDA
events, host µs around a synchronised step) on one large configuration (relu on 8192 × 8192 float32, the
throughput benchmark's timed one), so the steps worth cutting show before any is cut, and the same block
loop the runner runs (`wire.fresh.timed_block`) as the whole a call costs.

    python benchmarks/timing_step_costs.py [--rows 8192] [--cols 8192] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from engine.wire import chunks, timing  # noqa: E402
from engine.wire.fresh import FreshCalls, snapshot, timed_block  # noqa: E402
from engine.wire.inputs import reuse_buffers, seed_generators  # noqa: E402


def device_us(step, repeats: int = 15) -> dict:
    """Median device µs (events around the step) and host µs (the step between two syncs)."""
    step()
    torch.cuda.synchronize()
    dev, host = [], []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        step()
        end.record()
        torch.cuda.synchronize()
        host.append((time.perf_counter() - t0) * 1e6)
        dev.append(start.elapsed_time(end) * 1000.0)
    return {"device_us": round(statistics.median(dev), 1), "host_us": round(statistics.median(host), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=8192)
    parser.add_argument("--cols", type=int, default=8192)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "timing_step_costs.json")
    args = parser.parse_args()
    shape = (args.rows, args.cols)
    x = torch.randn(shape, device="cuda")
    y = torch.relu(x)
    nbytes = y.numel() * y.element_size()
    steps: dict[str, dict] = {}

    def make():
        seed_generators(123)
        with torch.device("cuda"):
            return [torch.randn(shape)]

    kept = [x.clone()]
    steps["inputs: randn of the seed"] = device_us(make)
    fresh = make()
    steps["inputs: written into the kept tensors"] = device_us(lambda: reuse_buffers(kept, fresh))
    flush = timing.Flusher("cuda", timing.TrialPolicy().flush_bytes)
    steps["flush (256 MiB)"] = device_us(flush)
    steps["the call (torch.relu)"] = device_us(lambda: torch.relu(x))
    steps["outputs kept (clone)"] = device_us(lambda: snapshot([y]))
    steps["chunk digests of one output (torch passes)"] = device_us(lambda: chunks.torch_word_sums(y))
    steps["chunk digests of one output (fused kernel)"] = device_us(lambda: chunks.word_sums(y))
    steps["fused digests equal the torch passes"] = {"equal": bool(torch.equal(chunks.word_sums(y),
                                                                                chunks.torch_word_sums(y)))}
    steps["commitments of 28 outputs"] = device_us(lambda: chunks.commitments([[y]] * 28))

    fd = os.memfd_create("bench")
    os.ftruncate(fd, nbytes)
    region = mmap.mmap(fd, nbytes)
    pageable = torch.frombuffer(region, dtype=torch.uint8).view(torch.float32).view(shape)
    steps["outputs to a shared region, unpinned (D2H)"] = device_us(lambda: pageable.copy_(y))
    pinned = torch.empty(shape, dtype=torch.float32, pin_memory=True)
    steps["outputs to pinned memory (D2H)"] = device_us(lambda: pinned.copy_(y))
    steps["outputs from pinned memory (H2D)"] = device_us(lambda: pinned.to("cuda"))
    t0 = time.perf_counter()
    err = torch.cuda.cudart().cudaHostRegister(pageable.data_ptr(), nbytes, 0)
    register_us = (time.perf_counter() - t0) * 1e6
    steps["page-locking the region (cudaHostRegister)"] = {"host_us": round(register_us, 1), "error": int(err)}
    if int(err) == 0:
        steps["outputs to the region, page-locked (D2H)"] = device_us(lambda: pageable.copy_(y))
        torch.cuda.cudart().cudaHostUnregister(pageable.data_ptr())

    def block(trials: int) -> float:
        calls = FreshCalls(lambda seed: (seed_generators(seed), [torch.randn(shape, device="cuda")])[1],
                           lambda inputs: [torch.relu(inputs[0])], 7, reuse_buffers)
        timed_block(calls, 2, 1, "cuda", timing.TrialPolicy().flush_bytes)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        times, _ = timed_block(calls, trials, 0, "cuda", timing.TrialPolicy().flush_bytes)
        wall = (time.perf_counter() - t0) * 1e6
        steps[f"block of {trials}: the call's own median (events)"] = {"device_us": round(statistics.median(times), 1)}
        return wall / trials

    for trials in (10, 28):
        steps[f"block of {trials}: wall a call"] = {"host_us": round(block(trials), 1)}
    report = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "shape": list(shape),
              "output_mib": nbytes / 2**20, "steps": steps}
    for name, value in steps.items():
        print(f"{name:50s} {value}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
