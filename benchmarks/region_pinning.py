"""What page-locking the judge's shared region costs, against what it saves (run on the device machine).

For region sizes of 64 MiB to 1 GiB: seconds to create the memfd region, to page-lock it
(cudaHostRegister), to erase it, and a device→host→device round trip of a tensor filling half of it,
page-locked and pageable. The ratio printed for each size is pageable round trip / (pin + pinned round
trip): above 1, pinning a fresh region pays for itself on one transfer.

    python benchmarks/region_pinning.py [--sizes 64,256,1024]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def seconds(fn) -> float:
    import torch

    torch.cuda.synchronize()
    started = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - started


def measure(mib: int) -> dict:
    import torch

    from engine.wire.shared import SharedRegion, TensorSlot

    size = mib * 2**20
    half = TensorSlot(0, "float32", [size // 8])
    device_tensor = torch.randn(size // 8, device="cuda")
    row: dict = {"mib": mib}
    for pinned in (False, True):
        started = time.perf_counter()
        region = SharedRegion.create(size, pin=False)
        created = time.perf_counter() - started
        pin = 0.0
        if pinned:
            started = time.perf_counter()
            err = torch.cuda.cudart().cudaHostRegister(region.bytes.data_ptr(), size, 0)
            pin = time.perf_counter() - started
            region.pinned = int(err) == 0
        region.put(0, device_tensor)  # first touch of the pages, not timed below
        trips = [seconds(lambda r=region: (r.put(0, device_tensor), r.take(half, "cuda"))) for _ in range(5)]
        erase = seconds(region.zero)
        key = "pinned" if pinned else "pageable"
        row[key] = {"create_s": created, "pin_s": pin, "round_trip_s": sorted(trips)[2], "erase_s": erase,
                    "registered": region.pinned}
        region.close()
    row["pin_pays_ratio"] = row["pageable"]["round_trip_s"] / (row["pinned"]["pin_s"] + row["pinned"]["round_trip_s"])
    return row


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="64,256,1024")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = [measure(int(s)) for s in args.sizes.split(",")]
    for row in rows:
        p, q = row["pageable"], row["pinned"]
        print(f"{row['mib']:5d} MiB: pin {q['pin_s'] * 1e3:7.1f} ms, erase {q['erase_s'] * 1e3:6.1f} ms; round trip "
              f"pinned {q['round_trip_s'] * 1e3:6.1f} ms, pageable {p['round_trip_s'] * 1e3:6.1f} ms; pageable / "
              f"(pin + pinned) = {row['pin_pays_ratio']:.2f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
