"""A best-of-8 round against the loopback endpoint (a test double that answers after a fixed delay per
request, as a loaded inference server does): the proposals asked one after another (concurrency 1, the
baseline, measured in the same run) against all at once (concurrency 8). Prints the seconds from the
round's start to the last reply, and the ratio.

    python benchmarks/llm_parallel.py [--delay 0.5] [--samples 8] [--out llm_parallel.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def round_seconds(url: str, slug: str, samples: int, delay: float, concurrency: int) -> float:
    from engine.runs import LLMOptions, RunRequest, create_run, execute_run
    from tests.test_runs import ScriptedPipeline

    marks: dict[str, float] = {}

    def phase(text: str) -> None:
        key = "asked" if "asking" in text else "answered" if "building and verifying" in text else None
        if key and key not in marks:
            marks[key] = time.perf_counter()

    run_id = create_run(RunRequest(slug, strategy="best-of-n", rounds=1, samples=samples, proposer="llm",
                                   llm=LLMOptions(url, f"delay-{delay}", "NO_KEY", 0.0, concurrency=concurrency)))
    execute_run(run_id, pipeline_factory=ScriptedPipeline, on_phase=phase)
    return marks["answered"] - marks["asked"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.5, help="seconds the endpoint takes per request")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ["REFINERY_HOME"] = tempfile.mkdtemp(prefix="llm-parallel-")
    from engine.settings import get_settings
    from tests.llm_server import start_server
    from tests.test_problem_loader import GOOD_TOML, write_problem

    get_settings.cache_clear()
    write_problem(get_settings().home / "problems", "toy-relu", toml=GOOD_TOML)
    server, url = start_server()
    try:
        sequential = round_seconds(url, "toy-relu", args.samples, args.delay, 1)
        parallel = round_seconds(url, "toy-relu", args.samples, args.delay, args.samples)
    finally:
        server.shutdown()
    result = {"samples": args.samples, "delay_s": args.delay, "sequential_s": round(sequential, 3),
              "parallel_s": round(parallel, 3), "speedup": round(sequential / parallel, 2)}
    print(f"best-of-{args.samples}, {args.delay} s per request: one after another {sequential:.2f} s, "
          f"all at once {parallel:.2f} s: {sequential / parallel:.1f}x")
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
