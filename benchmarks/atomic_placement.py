"""How much where a buffer lies in device memory moves the time of an atomics-bound kernel (device machine).

The judge times the naive CUDA port on its own buffers and the runner times the candidate on others, in
another process; for most kernels that changes nothing, but the library's histogram/naive (every element an
atomicAdd on one of 256 bins, 70 % of them on about forty hot bins) read 7.76 ms as a candidate and 9.57 ms as
the judge's baseline in one run. This times that kernel, built from the library's own file as the verifier
builds it and in the verifier's own timing loop, on the same input with its `bins` array moved through a
range of offsets inside one allocation (and the input too): if the time follows the offset, the difference
is the bins' place in the L2 cache's slices, not the verifier.

    python benchmarks/atomic_placement.py [--trials 15] [--json out.json]

Prints, per offset, the median of CUDA-event times (L2 flushed before each trial) and its ratio to offset 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROBLEM = ROOT / "assets/problems/c/histogram"
BINS_OFFSETS = [0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 65536]  # in int32 elements
DATA_OFFSETS = [0, 32, 1024, 65536]


def build(specs: list, scratch: Path):
    """The naive port built and loaded as the verifier builds and loads it (same flags, same error shim)."""
    from engine.build.candidate import ERROR_SHIM
    from engine.build.cuda import compile_shared_library
    from engine.settings import get_settings
    from engine.verify.wire.c_entry import load_entry

    source = (PROBLEM / "impls/naive.cu").read_text()
    built = compile_shared_library(source + ERROR_SHIM, get_settings().gpu_arch, scratch)
    if not built.ok:
        raise SystemExit(f"the naive port does not build:\n{built.log}")
    return load_entry(str(built.output), "kernel_histogram", specs)[1]


def median_us(fn, argv: list, trials: int) -> float:
    """The verifier's own timing loop: CUDA events, L2 flushed before each trial, two warm-up calls."""
    from engine.verify.wire import timing

    policy = timing.TrialPolicy(min_trials=trials, min_seconds=0.0, max_trials=trials, max_seconds=1e9,
                                floor_trials=trials)
    samples = timing.measure({"naive": lambda _i: fn(*argv)}, policy, "cuda", cross_check=False)
    return statistics.median(samples["naive"].times_us)


def main() -> int:
    import numpy as np
    import torch

    from engine.verify.wire.c_inputs import ArgSpec, make_inputs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--n", type=int, default=33554432)  # the library's "large" configuration
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    specs = [ArgSpec("n", "int", False, "in", value=args.n), ArgSpec("data", "int", True, "in", size=args.n),
             ArgSpec("bins", "int", True, "out", size=256)]
    values = make_inputs(specs[:2], {"n": args.n}, 12345, PROBLEM / "inputs.py")
    with tempfile.TemporaryDirectory() as scratch:
        fn = build(specs, Path(scratch))
        data_pool = torch.empty(args.n + max(DATA_OFFSETS), dtype=torch.int32, device="cuda")
        bins_pool = torch.zeros(256 + max(BINS_OFFSETS), dtype=torch.int32, device="cuda")
        expected = np.bincount(values["data"], minlength=256)
        rows = []
        for kind, offsets in (("bins", BINS_OFFSETS), ("data", DATA_OFFSETS)):
            base = None
            for offset in offsets:
                data = data_pool[offset:offset + args.n] if kind == "data" else data_pool[:args.n]
                data.copy_(torch.from_numpy(values["data"]))
                bins = bins_pool[offset:offset + 256] if kind == "bins" else bins_pool[:256]
                us = median_us(fn, [args.n, data.data_ptr(), bins.data_ptr()], args.trials)
                assert (bins.cpu().numpy() == expected).all(), "the kernel's histogram is wrong"
                base = base or us
                rows.append({"moved": kind, "offset_bytes": offset * 4, "address_mod_64k": bins.data_ptr() % 65536,
                             "median_us": us, "ratio": us / base})
                print(f"{kind} +{offset * 4:>7} B  {us:10.1f} µs  ×{us / base:.3f}", flush=True)
    print(f"device: {torch.cuda.get_device_name()}")
    if args.json:
        args.json.write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
