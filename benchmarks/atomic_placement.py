"""How much where a buffer lies in device memory moves the time of an atomics-bound kernel (device machine).

The judge times the naive CUDA port on its own buffers and the runner times the candidate on others, in
another process; for most kernels that changes nothing, but the library's histogram/naive (every element an
atomicAdd on one of 256 bins, 70 % of them on about forty hot bins) read 7.76 ms as a candidate and 9.57 ms as
the judge's baseline in one run. This times that kernel, built from the library's own file, on the same
input with its `bins` array moved through a range of offsets inside one allocation (and the input too): if
the time follows the offset, the difference is the bins' place in the L2 cache's slices, not the verifier.

    python benchmarks/atomic_placement.py [--trials 15] [--json out.json]

Prints, per offset, the median of CUDA-event times (L2 flushed before each trial) and its ratio to offset 0.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PROBLEM = ROOT / "assets/problems/c/histogram"
BINS_OFFSETS = [0, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 65536]  # in int32 elements
DATA_OFFSETS = [0, 32, 1024, 65536]


def build(source: Path, scratch: Path):
    library = scratch / "histogram_naive.so"
    subprocess.run(["nvcc", "-O3", "-shared", "-Xcompiler", "-fPIC", "-o", str(library), str(source)], check=True)
    fn = ctypes.CDLL(str(library)).kernel_histogram
    fn.argtypes, fn.restype = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p], None
    return fn


def median_us(fn, n: int, data_ptr: int, bins_ptr: int, trials: int, flush) -> float:
    import torch

    times = []
    for _ in range(trials + 2):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(n, data_ptr, bins_ptr)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times[2:])


def main() -> int:
    import numpy as np
    import torch

    from engine.verify.wire.c_inputs import ArgSpec, make_inputs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=15)
    parser.add_argument("--n", type=int, default=33554432)  # the library's "large" configuration
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    specs = [ArgSpec("n", "int", False, "in", value=args.n), ArgSpec("data", "int", True, "in", size=args.n)]
    values = make_inputs(specs, {"n": args.n}, 12345, PROBLEM / "inputs.py")
    with tempfile.TemporaryDirectory() as scratch:
        fn = build(PROBLEM / "impls/naive.cu", Path(scratch))
        flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
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
                us = median_us(fn, args.n, data.data_ptr(), bins.data_ptr(), args.trials, flush)
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
