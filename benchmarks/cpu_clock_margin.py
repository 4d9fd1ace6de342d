"""On a CPU: how much of its own time can a candidate hide from the judge's clock, and how close do honest
candidates come to the allowance?

The judge corroborates the runner's claimed times with its own clock (engine/verify/judge/clock.py). A
candidate that computes correctly but makes its process's timer run slow ("shaving") claims a fraction of
the time it took; it must be caught once the hidden share is worth having, while honest candidates, on an
idle or a loaded machine, stay inside the allowance. Prints, per candidate and load, the verdict, the
claimed time per trial, what the claim left unexplained and the allowance, and the share of the claim
each is; the baseline is the honest candidate of the same run.

    python benchmarks/cpu_clock_margin.py [--load 2] [--repeat 3] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROBLEM = ROOT / "tests" / "cheats" / "problems" / "pytorch" / "relu-small"

HONEST_SLEEP = '''
import time
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        time.sleep({seconds})  # a slow honest kernel: the time is real and claimed in full
        return x * (x > 0)
'''

HONEST_THREADS = '''
import torch


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.randn({n}, {n})

    def forward(self, x):
        self.a @ self.a  # intra-op threads: work on every core the job has, then spinning idle
        return x * (x > 0)
'''

SHAVING = '''
import os
import time
import torch

timing = os.sys.modules.get("engine.wire.timing")
if timing is not None:
    real = timing._perf_counter
    base = real()
    timing._perf_counter = lambda: base + (real() - base) * {factor}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        time.sleep({seconds})
        return x * (x > 0)
'''

DETAIL = re.compile(r"events claim ([\d.]+) µs and the loop costs ([\d.]+) µs .* leaving (-?[\d.]+) µs "
                    r"unexplained(?: in the median block)? \(allowed ([\d.]+) µs\)")


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def candidates(sleep_ms: float) -> dict[str, str]:
    seconds = sleep_ms / 1000
    found = {f"honest: sleep {sleep_ms:g} ms": HONEST_SLEEP.format(seconds=seconds),
             "honest: 384x384 matmul on intra-op threads": HONEST_THREADS.format(n=384)}
    for factor in (0.9, 0.8, 0.7, 0.6, 0.5):
        found[f"shaving: claims {factor:.0%} of sleep {sleep_ms:g} ms"] = SHAVING.format(factor=factor,
                                                                                         seconds=seconds)
    return found


def measure(verifier, problem, source: str) -> dict:
    result = verifier.evaluate(problem, source, "python")
    clock = next((f for f in result.integrity if f.check == "stream-escape"), None)
    row = {"verdict": str(result.verdict), "passed": clock.passed if clock else None,
           "detail": clock.detail if clock else result.message[:300]}
    match = DETAIL.search(clock.detail) if clock else None
    if match:
        claim, overhead, unexplained, allowed = map(float, match.groups())
        row.update(claim_us=claim, overhead_us=overhead, unexplained_us=unexplained, allowed_us=allowed)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--load", type=int, default=0, help="busy processes running beside the verifier")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sleep-ms", type=float, default=10.0)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()

    from engine.problems import load_problem
    from engine.settings import get_settings
    from engine.verify.evaluate import Verifier, VerifyOptions
    from engine.verify.pool import PoolConfig, WorkerPool
    from engine.verify.prepare import TimingOptions
    from engine.wire.policy import TrialPolicy

    settings = get_settings()
    policy = TimingOptions(TrialPolicy(min_trials=45, min_seconds=0.0, max_trials=60, max_seconds=5.0,
                                       flush_bytes=32 << 20))
    pool = WorkerPool(config=PoolConfig.from_settings(settings))
    verifier = Verifier(pool=pool, options=VerifyOptions(timeout_s=120, timing_policy=policy), settings=settings)
    problem = load_problem(PROBLEM)
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(options.load)]
    for process in load:
        process.start()
    rows: dict[str, list[dict]] = {}
    try:
        for _ in range(options.repeat):
            for name, source in candidates(options.sleep_ms).items():
                row = measure(verifier, problem, source)
                rows.setdefault(name, []).append(row)
                share = (f"unexplained {row['unexplained_us'] / row['claim_us']:+.2f} of the claim, allowed "
                         f"{row['allowed_us'] / row['claim_us']:.2f}" if "claim_us" in row else row["detail"])
                print(f"{name:48s} {row['verdict']:20s} {share}", flush=True)
    finally:
        stop.set()
        pool.close()
    print(f"\nload: {options.load} busy processes; {options.repeat} evaluations each")
    for name, found in rows.items():
        caught = sum(r["verdict"] != "correct" for r in found)
        margins = [r["allowed_us"] - r["unexplained_us"] for r in found if "claim_us" in r]
        median = statistics.median(margins) if margins else float("nan")
        print(f"  {name:48s} not correct {caught}/{len(found)}; allowance left (median) {median:9.0f} µs")
    if options.json:
        options.json.write_text(json.dumps({"load": options.load, "sleep_ms": options.sleep_ms, "rows": rows},
                                           indent=1))


if __name__ == "__main__":
    main()
