"""Candidates per minute through the local pool against 1 and N Ray workers, on the same candidates.

The candidates are the shipped implementations of a few problems (the CUDA ones on a GPU, the CPU
ones otherwise), `--repeat` times over. Every candidate is built once before any clock starts, and
each pool's workers are started and warmed first, so the passes compare verification alone. Passes,
in one process: `local` (the product's default pool: one worker), `local-all` (one local worker per
GPU, when there are several), then `ray-<n>` for each count in `--workers` (one GPU per worker while
there are enough, else an equal share of one). Printed: candidates/minute, the ratio to `local`,
Ray's overhead (ray-1 against local, both one worker), scaling efficiency where each Ray worker has a
GPU of its own, and whether every pass reached the same verdicts.

    python benchmarks/ray_scaling.py [--problems relu,softmax,gemm,stencil-2d] [--workers 1,2,4]
                                     [--repeat 2] [--quick] [--out ray_scaling.json]

Connects to RAY_ADDRESS when set, else starts Ray on this machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# Ray's worker processes import the engine too, from wherever they start.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)


@dataclasses.dataclass
class Work:
    """One problem's candidates: (label, source, language) each."""

    problem: object
    candidates: list[tuple[str, str, str]]


def candidates(slugs: list[str], gpu: bool, repeat: int) -> list[Work]:
    from engine.problems import get_problem

    work = []
    for slug in slugs:
        problem = get_problem(slug)
        impls = [i for i in problem.implementations if i.device == ("cuda" if gpu else "cpu")]
        if not impls:
            print(f"  {slug}: no {'CUDA' if gpu else 'CPU'} implementations; skipped", flush=True)
            continue
        work.append(Work(problem, [(f"{i.name}#{r}", i.source, i.language) for r in range(repeat) for i in impls]))
    return work


def warm(pool, verifier, work: list[Work]) -> None:
    """Start every worker and run one candidate on each (CUDA context, profiler, caches)."""
    first = work[0].candidates[0]
    verifier.evaluate_many(work[0].problem, [(first[1], first[2])] * pool.size)


def timed_pass(name: str, make, settings, options, work: list[Work]) -> dict:
    from engine.verify.evaluate import Verifier

    started = time.perf_counter()
    pool = make()
    try:
        verifier = Verifier(pool=pool, options=options, settings=settings)
        warm(pool, verifier, work)
        startup = time.perf_counter() - started
        began = time.perf_counter()
        with ThreadPoolExecutor(max_workers=len(work)) as runner:  # keeps every worker busy across problems
            batches = list(runner.map(lambda w: verifier.evaluate_many(w.problem, [(s, lang) for _, s, lang
                                                                                   in w.candidates]), work))
        wall = time.perf_counter() - began
        device = pool.info.device or "cpu"
    finally:
        pool.close()
    verdicts = {f"{w.problem.slug}/{label}": str(result.verdict)
                for w, batch in zip(work, batches, strict=True)
                for (label, _, _), result in zip(w.candidates, batch, strict=True)}
    count = len(verdicts)
    row = {"pass": name, "workers": pool.size, "candidates": count, "wall_s": wall, "startup_s": startup,
           "per_minute": 60 * count / wall, "device": device, "verdicts": verdicts}
    print(f"  {name:>10}: {row['per_minute']:7.1f} candidates/min ({count} in {wall:.1f} s; start-up and warm-up "
          f"{startup:.1f} s) on {device}", flush=True)
    return row


def summarize(rows: list[dict], gpus: float) -> dict:
    by_name = {r["pass"]: r for r in rows}
    local = by_name["local"]["per_minute"]
    summary: dict = {"ratio_to_local": {r["pass"]: r["per_minute"] / local for r in rows}}
    if "ray-1" in by_name:
        summary["ray_overhead"] = local / by_name["ray-1"]["per_minute"] - 1  # > 0: Ray is slower
        one = by_name["ray-1"]["per_minute"]
        summary["speedup_over_ray_1"] = {r["pass"]: r["per_minute"] / one for r in rows if r["pass"].startswith("ray-")}
        summary["scaling_efficiency"] = {r["pass"]: r["per_minute"] / (r["workers"] * one) for r in rows
                                         if r["pass"].startswith("ray-") and 1 < r["workers"] <= gpus}
    reference = by_name["local"]["verdicts"]
    summary["verdict_differences"] = {r["pass"]: {k: (reference.get(k), v) for k, v in r["verdicts"].items()
                                                  if reference.get(k) != v} for r in rows}
    summary["verdicts_identical"] = not any(summary["verdict_differences"].values())
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default="relu,softmax,gemm,stencil-2d", help="problem slugs, comma-separated")
    parser.add_argument("--workers", default="1,2,4", help="Ray worker counts to measure")
    parser.add_argument("--repeat", type=int, default=2, help="times each implementation is verified per pass")
    parser.add_argument("--quick", action="store_true", help="short timing policy (a smoke run, not a measurement)")
    parser.add_argument("--out", type=Path, default=None, help="JSON results (default: $OUT or ./)")
    args = parser.parse_args()

    os.environ.setdefault("REFINERY_HOME", tempfile.mkdtemp(prefix="ray-scaling-"))
    import ray

    from engine.settings import get_settings
    from engine.verify.evaluate import Verifier, VerifyOptions
    from engine.verify.pool import PoolConfig, WorkerPool
    from engine.verify.prepare import TimingOptions
    from engine.verify.ray_pool import RayWorkerPool
    from engine.verify.scale import connect
    from engine.wire.policy import TrialPolicy

    settings = get_settings()
    config = PoolConfig.from_settings(settings)
    quick = TimingOptions(TrialPolicy(3, 0.0, 5, 1.0, flush_bytes=1 << 20))
    options = VerifyOptions(timing_policy=quick) if args.quick else VerifyOptions()
    connect()
    gpus = float(ray.cluster_resources().get("GPU", 0))
    with WorkerPool(config=config) as probe:
        gpu = probe.gpu
        work = candidates([s for s in args.problems.split(",") if s], gpu, args.repeat)
        if not work:
            print("no candidates to verify")
            return 1
        builder = Verifier(pool=probe, options=options, settings=settings)
        started = time.perf_counter()
        for w in work:
            for _, source, language in w.candidates[:len(w.candidates) // args.repeat]:
                builder.build(w.problem, source, language)
        print(f"{sum(len(w.candidates) for w in work)} candidates per pass over {len(work)} problems; built in "
              f"{time.perf_counter() - started:.1f} s; Ray cluster: {gpus:g} GPU(s)", flush=True)

    passes = [("local", lambda: WorkerPool(config=config))]
    if gpus > 1:
        all_gpus = dataclasses.replace(config, gpus=tuple(range(int(gpus))))
        passes.append(("local-all", lambda: WorkerPool(config=all_gpus)))
    for count in [int(n) for n in args.workers.split(",") if n]:
        passes.append((f"ray-{count}", lambda n=count: RayWorkerPool(workers=n, config=config)))
    rows = [timed_pass(name, make, settings, options, work) for name, make in passes]
    summary = summarize(rows, gpus)

    for name, ratio in summary["ratio_to_local"].items():
        print(f"  {name:>10}: {ratio:5.2f}× the local pool's rate")
    if "ray_overhead" in summary:
        print(f"  Ray overhead (ray-1 against local): {100 * summary['ray_overhead']:+.1f} %")
        for name, efficiency in summary["scaling_efficiency"].items():
            print(f"  scaling efficiency {name}: {100 * efficiency:.0f} % (one GPU per worker)")
    print(f"  verdicts identical across pools: {'yes' if summary['verdicts_identical'] else 'NO'}")
    for name, differences in summary["verdict_differences"].items():
        for key, (expected, got) in differences.items():
            print(f"    {name}: {key}: local {expected}, here {got}")

    report = {"gpus": gpus, "quick": args.quick, "problems": [w.problem.slug for w in work],
              "timing": dataclasses.asdict(options.timing_policy or TimingOptions.from_settings(settings)),
              "passes": rows, "summary": summary}
    out = args.out or Path(os.environ.get("OUT", ".")) / "ray_scaling.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1))
    print(f"wrote {out}")
    return 0 if summary["verdicts_identical"] else 2


if __name__ == "__main__":
    sys.exit(main())
