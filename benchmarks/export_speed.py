"""Export throughput: a million candidates to JSONL and Parquet (target <= 60 s each, bounded memory).

Baseline, measured in the same run on the first 200k candidates: loading every row as ORM objects
at once and writing them (what a quick script would do). Prints seconds, rows/s, peak RSS and the
ratio against that baseline.

    python benchmarks/export_speed.py [--rows 1000000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
from pathlib import Path


def populate(rows: int) -> None:
    from sqlalchemy import insert

    from db.models import Candidate, Diagnostic, Evaluation
    from db.session import get_engine

    engine = get_engine()
    batch = 50_000
    source = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n" * 4
    with engine.begin() as conn:
        for start in range(0, rows, batch):
            ids = range(start + 1, min(rows, start + batch) + 1)
            conn.execute(insert(Candidate), [
                {"id": i, "problem_slug": f"p{i % 40}", "origin": "library", "language": "python", "source": source,
                 "source_hash": f"{i:x}", "step": i % 50, "sample": 0, "depth": 1, "proposal": {}} for i in ids])
            conn.execute(insert(Evaluation), [
                {"candidate_id": i, "verdict": "correct" if i % 5 else "incorrect", "message": "", "configs": [],
                 "integrity": [], "timing": {}, "speedup": 1 + (i % 97) / 10, "candidate_us": 50.0 + i % 13,
                 "device": "NVIDIA H200", "reward": 0.1, "reward_components": {"total": 0.1}, "flagged": False,
                 "recorded": False} for i in ids])
            conn.execute(insert(Diagnostic), [
                {"candidate_id": i, "kind": "static", "data": {"features": {"registers": 16 + i % 40}}}
                for i in ids])


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def baseline(out: Path, limit: int) -> float:
    from sqlmodel import Session, select

    from db.models import Candidate, Evaluation
    from db.session import get_engine

    started = time.perf_counter()
    with Session(get_engine()) as session:
        rows = session.exec(select(Candidate, Evaluation).join(Evaluation, Evaluation.candidate_id == Candidate.id)
                            .limit(limit)).all()
        with out.open("w") as handle:
            for candidate, evaluation in rows:
                handle.write(json.dumps({**candidate.model_dump(mode="json"), **evaluation.model_dump(mode="json")})
                             + "\n")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="refinery-export-bench-"))
    os.environ["REFINERY_HOME"] = str(home)
    from engine.export import ExportFilters, export_dataset
    from engine.store.database import use_settings_database

    use_settings_database()
    started = time.perf_counter()
    populate(args.rows)
    print(f"populated {args.rows} candidates in {time.perf_counter() - started:.1f} s")
    populated_rss = peak_rss_mb()
    # Ours first, so the peak memory it reports is the streamed export's, not the baseline's.
    for fmt in ("jsonl", "parquet"):
        t0 = time.perf_counter()
        result = export_dataset("candidates", fmt, home / fmt)
        seconds = time.perf_counter() - t0
        print(f"{fmt}: {result.counts['default']} rows in {seconds:.1f} s ({result.counts['default'] / seconds:,.0f}"
              f" rows/s), target <= 60 s: {'met' if seconds <= 60 else 'MISSED'}; peak RSS {peak_rss_mb():.0f} MB "
              f"(after populating: {populated_rss:.0f} MB)")
    small = min(200_000, args.rows)
    ours_small = time.perf_counter()
    export_dataset("candidates", "jsonl", home / "small", ExportFilters(problems=tuple(f"p{i}" for i in range(8))))
    ours_small = time.perf_counter() - ours_small
    base_s = baseline(home / "baseline.jsonl", small)
    print(f"baseline (ORM, all in memory) {small} rows: {base_s:.1f} s, peak RSS {peak_rss_mb():.0f} MB; ours on "
          f"{small} rows: {ours_small:.1f} s -> {base_s / ours_small:.2f}x faster")

if __name__ == "__main__":
    main()
