"""On the device: one implementation verified N times in one warm worker pool, as a run would.

An honest kernel must come back correct every time, with its timing close each time: a verdict that
flips, or a spread far beyond the timer's noise, is a verifier bug that would mislabel candidates.
With `--profile-between`, each evaluation is followed by the ncu profile a run makes of a correct
candidate, so the next verification starts right after the profiler, as in a run. Prints every
verdict with its message (the failing integrity check, when one fails) and the spread of the times.

    python benchmarks/verifier_repeat.py relu/vectorized --times 10 [--profile-between] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidate", help="SLUG/IMPL")
    parser.add_argument("--times", type=int, default=10)
    parser.add_argument("--profile-between", action="store_true")
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()

    from engine.analysis import analyse_candidate
    from engine.analysis.profile.dynamic import profile_candidate, profile_config
    from engine.problems import get_problem
    from engine.schema.verdict import Verdict
    from engine.settings import get_settings
    from engine.verify.evaluate import Verifier

    slug, name = options.candidate.split("/", 1)
    problem, settings = get_problem(slug), get_settings()
    impl = problem.implementation(name)
    static = analyse_candidate(problem, impl.source, impl.language) if options.profile_between else None
    rows = []
    with Verifier(settings=settings) as verifier:
        for index in range(options.times):
            started = time.perf_counter()
            result = verifier.evaluate(problem, impl.source, impl.language)
            row = {"index": index, "verdict": result.verdict.value, "message": result.message,
                   "candidate_us": result.candidate_us, "seconds": round(time.perf_counter() - started, 2),
                   "failed_checks": [f"{f.check}: {f.detail}" for f in result.integrity if not f.passed]}
            if options.profile_between and result.verdict == Verdict.CORRECT:
                config = profile_config(problem, result.timed_config, result.candidate_us)
                profile = profile_candidate(problem, impl.source, impl.language, static, settings=settings,
                                            config=config)
                row["ncu"] = {"ok": profile.ok, "reason": profile.reason, "seconds": round(profile.seconds, 2)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    times = [r["candidate_us"] for r in rows if r["candidate_us"]]
    summary = {"candidate": options.candidate, "verdicts": dict(collections.Counter(r["verdict"] for r in rows)),
               "candidate_us": {"min": min(times), "median": statistics.median(times), "max": max(times)}
               if times else None}
    print(json.dumps(summary), flush=True)
    if options.json:
        options.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
