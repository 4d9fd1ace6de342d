"""How fast fresh runners warm up, alone and many at once (run on the device machine).

A GPU slot takes a fresh runner for every candidate, so the slot's throughput is bounded by how many
runners its spares finish warming a second. This starts runners exactly as the pool does (the sandbox,
the cores everything but timing runs on) in waves of 1, the pool's spare count, and every core, and
prints for each wave the wall until all said hello, runners ready per second, and each warm-up step's
median wall and CPU seconds (from the runners' hellos: evidence from our own code before any candidate).

    python benchmarks/runner_warmup.py [--waves 1,10,16] [--out runner_warmup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def wave(config, plan, count: int) -> dict:
    """`count` spares of an idle GPU slot (its own gatekeeper lets each onto the GPU once imported)."""
    from engine.verify.pool import Slot

    slot = Slot(replace(config, spares=count), None, plan.slots[0] if plan.slots else None,
                plan.others if plan.pinned else None, plan.reason)
    slot.device = "cuda"  # as its judge would say; no judge is started
    started = time.monotonic()
    try:
        slot.fill()
        spawned = time.monotonic() - started
        deadline = started + 300.0
        while any(r.gate == "closed" for r in slot.spares) and time.monotonic() < deadline:
            time.sleep(0.01)  # the gatekeeper alone reads a spare until its gate is open
        hellos = [runner.ready() for runner in slot.spares]
        wall = time.monotonic() - started
    finally:
        slot.close()
    steps = sorted({name for hello in hellos for name in hello.get("startup_phases", {})})
    per_step = {name: {"wall_s": statistics.median(h["startup_phases"][name][0] for h in hellos),
                       "cpu_s": statistics.median(h["startup_phases"][name][1] for h in hellos)}
                for name in steps if all(name in h.get("startup_phases", {}) for h in hellos)}
    return {"runners": count, "spawn_s": spawned, "wall_s": wall, "ready_per_s": count / wall,
            "startup_s_median": statistics.median(h["startup_s"] for h in hellos),
            "cpu_s_median": statistics.median(sum(step[1] for step in h.get("startup_phases", {}).values())
                                              for h in hellos),
            "steps": per_step}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--waves", default="", help="runners started at once, per wave (default 1,spares,cores)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    from engine.verify.cores import CoreReservation
    from engine.verify.pool import PoolConfig, spare_count

    config = PoolConfig.from_settings()
    reservation = CoreReservation(1, config.timing_cores)
    plan = reservation.plan
    counts = [int(c) for c in args.waves.split(",") if c] or [1, spare_count(config, True), os.cpu_count() or 16]
    print(f"cores: {plan.reason}", flush=True)
    report = {"cores": plan.reason, "cpu_count": os.cpu_count(), "waves": []}
    try:
        for count in counts:
            result = wave(config, plan, count)
            report["waves"].append(result)
            print(json.dumps(result), flush=True)
    finally:
        reservation.release()
    out = args.out or Path(os.environ.get("OUT", ".")) / "runner_warmup.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
