"""Every shipped CUDA implementation through the real verifier on the present GPU: verdict, message,
median time on the largest configuration and speedup, one JSON line each as it finishes (so a
run cut short still reports what it did), then the expectation table.

    python benchmarks/library_gpu_check.py [--problems a,b [--only]] [--out results.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--problems", default="")
    parser.add_argument("--kind", default="")
    parser.add_argument("--only", action="store_true", help="check only the problems named, not the rest after them")
    parser.add_argument("--out", default="library_gpu.jsonl")
    args = parser.parse_args()
    from engine.problems import scan_all
    from engine.verify.evaluate import Verifier

    # The order given is kept, so a device call cut short has checked the problems named first.
    order = [s for s in args.problems.split(",") if s]
    library = [p for p in scan_all().problems if not args.kind or p.kind == args.kind]
    rank = {slug: i for i, slug in enumerate(order)}
    problems = sorted(library, key=lambda p: rank.get(p.slug, len(order)))
    if args.only:
        problems = [p for p in problems if p.slug in rank]
    times: dict[tuple[str, str], float] = {}
    with Verifier() as verifier, Path(args.out).open("a") as out:
        for problem in problems:
            impls = [i for i in problem.implementations if i.device == "cuda"]
            started = time.perf_counter()
            results = verifier.evaluate_many(problem, [(i.source, i.language) for i in impls])
            seconds = time.perf_counter() - started
            for impl, result in zip(impls, results, strict=True):
                row = {"problem": problem.slug, "impl": impl.name, "strategy": impl.strategy,
                       "verdict": str(result.verdict), "candidate_us": result.candidate_us,
                       "baseline_us": result.baseline_us, "baseline": result.baseline_name,
                       "speedup": result.speedup, "config": result.timed_config,
                       "message": result.message[:300], "device": result.device,
                       "log": (result.log or "")[-600:] if str(result.verdict) != "correct" else ""}
                out.write(json.dumps(row) + "\n")
                out.flush()
                if result.candidate_us:
                    times[(problem.slug, impl.name)] = result.candidate_us
                speed = f"{result.speedup:.2f}x" if result.speedup else "-"
                print(f"{problem.slug:22s} {impl.name:18s} {str(result.verdict):20s} "
                      f"{result.candidate_us or 0:10.1f} us {speed:>8s}  {result.message[:90]}", flush=True)
            print(f"# {problem.slug}: {len(impls)} in {seconds:.1f} s", flush=True)
            for e in problem.expectations:
                fast, slow = times.get((problem.slug, e.faster)), times.get((problem.slug, e.slower))
                held = "held" if fast and slow and fast < slow else "NOT HELD" if fast and slow else "unmeasured"
                print(f"# expectation {problem.slug}: {e.faster} < {e.slower}: {held} "
                      f"({fast or 0:.1f} vs {slow or 0:.1f} us)", flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
