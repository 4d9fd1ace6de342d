"""The refinement runs of a database, summarised the way the engine issue asks: per run, the best
correct (unflagged) candidate's speedup over the baseline and its % of the roofline, then the
geometric mean of the best speedups. Reads any database URL, e.g. the runs.db a device call brings back.

    .venv/bin/python benchmarks/mcts_report.py sqlite:////path/to/runs.db [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from sqlmodel import Session, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from db.models import Candidate, Diagnostic, Evaluation, Run  # noqa: E402
from db.session import get_engine  # noqa: E402


def best_of_runs(url: str) -> list[dict]:
    rows = []
    with Session(get_engine(url)) as session:
        for run in session.exec(select(Run).order_by(Run.id)):
            candidates = session.exec(select(Candidate).where(Candidate.run_id == run.id)).all()
            ids = [c.id for c in candidates]
            evaluations = session.exec(select(Evaluation).where(Evaluation.candidate_id.in_(ids))).all()
            correct = [e for e in evaluations if e.verdict == "correct" and not e.flagged and e.speedup]
            row = {"run": run.id, "problem": run.problem_slug, "strategy": run.strategy, "candidates": len(ids),
                   "correct": len(correct), "best_speedup": None, "best_implementation": None, "pct_of_roof": None,
                   "bound": None, "bottleneck": None, "device": None}
            if correct:
                best = max(correct, key=lambda e: e.speedup)
                candidate = next(c for c in candidates if c.id == best.candidate_id)
                roofline = session.exec(select(Diagnostic).where(Diagnostic.candidate_id == best.candidate_id,
                                                                 Diagnostic.kind == "roofline")).first()
                point = ((roofline.data or {}).get("point") or {}) if roofline else {}
                row.update(best_speedup=best.speedup, device=best.device,
                           best_implementation=(candidate.proposal or {}).get("signature")
                           or (candidate.proposal or {}).get("implementation"),
                           pct_of_roof=point.get("pct_of_roof"), bound=point.get("bound"),
                           bottleneck=roofline.bottleneck if roofline else None)
            rows.append(row)
    return rows


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", help="database URL, e.g. sqlite:////tmp/runs.db")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = best_of_runs(args.url)
    print("| problem | run | candidates | correct | best | speedup | % of roof | bound | class |")
    print("|---|---:|---:|---:|---|---:|---:|---|---|")
    for r in rows:
        speed = f"{r['best_speedup']:.2f}×" if r["best_speedup"] else "-"
        roof = f"{100 * r['pct_of_roof']:.1f} %" if r["pct_of_roof"] is not None else "-"
        print(f"| {r['problem']} | {r['run']} | {r['candidates']} | {r['correct']} | {r['best_implementation'] or '-'} "
              f"| {speed} | {roof} | {r['bound'] or '-'} | {r['bottleneck'] or '-'} |")
    mean = geomean([r["best_speedup"] for r in rows if r["best_speedup"]])
    print(f"\ngeomean of best speedups over {sum(1 for r in rows if r['best_speedup'])} runs: "
          f"{mean:.2f}×" if mean else "\nno run has a correct candidate")
    if args.json:
        args.json.write_text(json.dumps({"runs": rows, "geomean_best_speedup": mean}, indent=2))


if __name__ == "__main__":
    main()
