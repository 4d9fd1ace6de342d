"""What each untimed step of the timed loop costs a trial on the GPU (run on the device machine).

The loop both sides run (`wire.fresh.timed_block`) writes fresh values into the same input tensors before
every call, keeps a copy of every call's outputs after it and syncs the device after every round. This
times one block of a plain `torch.relu` through that loop and through variants that leave one step out
or change it, on the same card in the same process, and prints the wall time per trial (the judge's clock
around the block) and its ratio to today's loop:

    python benchmarks/timing_loop_cost.py [--shapes 8192x8192,2048x2048,16x16384] [--trials 150] [--json F]

Variants: `today`; `no-refill-copy` (the fresh tensors are the call's inputs, no copy into kept ones);
`no-snapshot` (the returned tensors kept as they are, no clone); `both` (neither); `sync-every-8` (a
device sync every eighth round); `in-place-draw` (values drawn straight into the kept tensors);
`same-inputs` (no fresh values, no kept outputs: the loop before fresh values).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class _Problem:
    """A KernelBench-shaped problem module: one random matrix of `shape`."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.shape = shape

    def get_inputs(self) -> list:
        import torch

        return [torch.randn(*self.shape)]


def _variant_calls(name: str, problem: _Problem, base_seed: int):
    import torch

    from engine.wire import fresh
    from engine.wire.inputs import as_list, make_inputs, reuse_buffers, seed_generators

    make = lambda seed: make_inputs(problem, seed, "cuda")  # noqa: E731
    call = lambda inputs: as_list(torch.relu(*inputs))  # noqa: E731
    refill = reuse_buffers
    if name in ("no-refill-copy", "both"):
        refill = lambda _kept, new: new  # noqa: E731
    calls = fresh.FreshCalls(make, call, base_seed, refill)
    if name == "in-place-draw":
        def draw(seed: int, kept=calls.inputs) -> list:
            seed_generators(seed)
            kept[0].normal_()
            return kept
        calls.make, calls.refill = draw, (lambda _kept, new: new)
    if name == "same-inputs":
        calls.before = lambda _n, _t: None
        calls.after = lambda _n, _t: None
    return calls


def measure(shape: tuple[int, int], trials: int, repeats: int) -> dict:
    import torch

    from engine.wire import fresh, timing

    problem = _Problem(shape)
    variants = ["today", "no-refill-copy", "no-snapshot", "both", "sync-every-8", "in-place-draw", "same-inputs"]
    walls: dict[str, list[float]] = {v: [] for v in variants}
    kernel: dict[str, list[float]] = {v: [] for v in variants}
    snapshot, sync_every = fresh.snapshot, timing.SYNC_EVERY
    for repeat in range(repeats):  # interleaved, so drift shows in every variant alike
        for name in variants:
            fresh.snapshot = (lambda outs: list(outs)) if name in ("no-snapshot", "both", "same-inputs") else snapshot
            timing.SYNC_EVERY = 8 if name == "sync-every-8" else sync_every
            calls = _variant_calls(name, problem, 1000 + repeat)
            torch.cuda.synchronize()
            started = time.perf_counter()
            times, _ = fresh.timed_block(calls, trials, 3, "cuda", timing.TrialPolicy().flush_bytes)
            walls[name].append((time.perf_counter() - started) * 1e6 / (trials + 3))
            kernel[name].append(statistics.median(times))
            del calls
            torch.cuda.empty_cache()
    fresh.snapshot, timing.SYNC_EVERY = snapshot, sync_every
    today = statistics.median(walls["today"])
    return {"shape": list(shape), "trials": trials,
            "variants": {v: {"wall_us_per_trial": statistics.median(walls[v]),
                             "ratio_to_today": statistics.median(walls[v]) / today,
                             "kernel_median_us": statistics.median(kernel[v])} for v in variants}}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="8192x8192,2048x2048,16x16384")
    parser.add_argument("--trials", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    import torch

    print(torch.cuda.get_device_name(), torch.__version__, flush=True)
    rows = []
    for text in args.shapes.split(","):
        rows.append(measure(tuple(int(d) for d in text.split("x")), args.trials, args.repeats))
        for name, v in rows[-1]["variants"].items():
            print(f"{text:>11} {name:>15}: {v['wall_us_per_trial']:8.1f} µs/trial "
                  f"(x{v['ratio_to_today']:.2f} of today), kernel {v['kernel_median_us']:7.1f} µs", flush=True)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
