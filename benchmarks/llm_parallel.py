"""A best-of-8 round against the loopback endpoint (a test double that answers after a set delay per
request, as a loaded inference server does), through the real run, pipeline and verifier with the compiler
and the worker faked (a build takes a fixed time on the build executor's threads, a verification a fixed time
on one worker slot). Three ways, measured in the same run, the first the baseline:

- sequential: one request at a time (concurrency 1), builds once every reply is in (as before issue 22);
- parallel: all requests at once (concurrency = samples), builds once every reply is in;
- streaming: all requests at once, each reply's build started as it arrives (`evaluate_stream`).

Each under two endpoints: every request the same delay, and the same mean delay spread evenly over the
samples (replies of different lengths). Prints, from the round's start: the first build's start, the last
reply, the round stored; and the ratios to the sequential baseline.

    python benchmarks/llm_parallel.py [--delay 0.5] [--spread 0.8] [--build 0.5] [--verify 0.0]
                                      [--samples 8] [--build-jobs N] [--out llm_parallel.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MODES = (("sequential", False), ("parallel", False), ("streaming", True))  # (name, builds as replies arrive)


class TimedSlot:
    """A worker pool of one slot whose every job takes `seconds` and is judged correct."""

    size, gpu, info = 1, False, SimpleNamespace(device=None)

    def __init__(self, seconds: float) -> None:
        self.seconds, self.lock = seconds, threading.Lock()

    def run(self, job, timeout_s=None, fresh=False):
        from engine.schema.verdict import EvaluationResult, Verdict
        from engine.verify.pool import JobOutcome

        with self.lock:
            time.sleep(self.seconds)
        return JobOutcome("ok", EvaluationResult(Verdict.CORRECT, "correct", speedup=1.5, candidate_us=10.0,
                                                 baseline_us=15.0, device="cpu"))

    def close(self) -> None:
        pass


class AllAtOnce:
    """The pipeline as it was before builds streamed: it takes a step's proposals once every reply is in."""

    def __init__(self, pipeline) -> None:
        self.pipeline, self.device_name = pipeline, pipeline.device_name

    def evaluate(self, proposals):
        return self.pipeline.evaluate(proposals)

    def close(self) -> None:
        self.pipeline.close()


def one_round(url: str, slug: str, samples: int, delays: list[float], concurrency: int, streaming: bool,
              build_s: float, verify_s: float) -> dict[str, float]:
    """Seconds from the round's start (the run asking) to the first build's start, the last reply and the
    round stored."""
    import engine.runs.pipeline
    from engine.compilation.candidate import CandidateBuild
    from engine.runs.run import LLMOptions, RunRequest, create_run, execute_run

    marks: dict[str, float] = {}

    def mark(key: str) -> None:
        marks.setdefault(key, time.perf_counter())

    def phase(text: str) -> None:
        if "asking" in text:
            mark("asked")
        elif "building and verifying" in text:
            mark("answered")

    def builder(problem, source, language, **options):
        mark("first_build")
        time.sleep(build_s)
        return CandidateBuild(True, language, "torch", seconds=build_s)

    def factory(problem, gpu):
        pipeline = engine.runs.pipeline.RoundPipeline(problem, gpu)
        pipeline.verifier.builder = builder
        return pipeline if streaming else AllAtOnce(pipeline)

    engine.runs.pipeline.make_pool = lambda settings: TimedSlot(verify_s)
    model = "samples-" + ",".join(f"{d:.3f}" for d in delays)
    run_id = create_run(RunRequest(slug, strategy="best-of-n", rounds=1, samples=samples, proposer="llm",
                                   llm=LLMOptions(url, model, "NO_KEY", 0.0, concurrency=concurrency)))
    execute_run(run_id, pipeline_factory=factory, on_phase=phase, on_step=lambda step, items: mark("stored"))
    return {key: round(marks[key] - marks["asked"], 3) for key in ("first_build", "answered", "stored")}


def scenario(url: str, slug: str, samples: int, delays: list[float], build_s: float, verify_s: float) -> dict:
    rows = {name: one_round(url, slug, samples, delays, 1 if name == "sequential" else samples, streaming,
                            build_s, verify_s) for name, streaming in MODES}
    base = rows["sequential"]
    for row in rows.values():
        row["round_speedup"] = round(base["stored"] / row["stored"], 2)
        row["first_build_speedup"] = round(base["first_build"] / row["first_build"], 2)
    return {"delays_s": [round(d, 3) for d in delays], "modes": rows}


def show(title: str, result: dict) -> None:
    print(title)
    print(f"  {'':<11} {'first build':>12} {'last reply':>11} {'round':>8} {'round vs seq':>13} "
          f"{'1st build vs seq':>17}")
    for name, row in result["modes"].items():
        print(f"  {name:<11} {row['first_build']:>10.2f} s {row['answered']:>9.2f} s {row['stored']:>6.2f} s "
              f"{row['round_speedup']:>12.2f}x {row['first_build_speedup']:>16.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.5, help="mean seconds the endpoint takes per request")
    parser.add_argument("--spread", type=float, default=0.8,
                        help="uneven endpoint: delays from delay*(1-spread) to delay*(1+spread)")
    parser.add_argument("--build", type=float, default=0.5, help="seconds a (fake) build takes")
    parser.add_argument("--verify", type=float, default=0.0, help="seconds a (fake) verification takes, one slot")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--build-jobs", type=int, default=0, help="builds at once (0: one per CPU core)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ["REFINERY_HOME"] = tempfile.mkdtemp(prefix="llm-parallel-")
    os.environ["REFINERY_BUILD_JOBS"] = str(args.build_jobs)
    from engine.compilation.parallel import default_jobs
    from engine.settings import get_settings
    from engine.store.database import use_settings_database
    from tests.llm_server import start_server
    from tests.test_problem_loader import GOOD_TOML, write_problem

    get_settings.cache_clear()
    use_settings_database()
    write_problem(get_settings().home / "problems", "toy-relu", toml=GOOD_TOML)
    n = args.samples
    fixed = [args.delay] * n
    uneven = [args.delay * (1 - args.spread + 2 * args.spread * k / max(1, n - 1)) for k in range(n)]
    server, url = start_server()
    try:
        one_round(url, "toy-relu", n, fixed, n, True, args.build, args.verify)  # warm-up: imports, analysis cache
        results = {"fixed": scenario(url, "toy-relu", n, fixed, args.build, args.verify),
                   "uneven": scenario(url, "toy-relu", n, uneven, args.build, args.verify)}
    finally:
        server.shutdown()
    result = {"samples": n, "delay_s": args.delay, "spread": args.spread, "build_s": args.build,
              "verify_s": args.verify, "build_jobs": default_jobs(), "cpus": os.cpu_count(), **results}
    print(f"best-of-{n} on the loopback endpoint; fake build {args.build} s ({default_jobs()} at once), fake "
          f"verification {args.verify} s (one slot); seconds from the round's start")
    show(f"every request {args.delay} s:", results["fixed"])
    show(f"requests {uneven[0]:.2f}-{uneven[-1]:.2f} s (mean {args.delay} s):", results["uneven"])
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
