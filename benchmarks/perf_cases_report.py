"""Share of the real CUDA performance bugs (tests/perf_cases) whose root cause `refinery analyze` names.

A case is found when the analysis names its root cause's kind on the slow program and not on its
fix (see tests/perf_cases_support.py). Prints a table per category, the cases missed with what the
analysis said instead, and files with no compiled analysis; `--json PATH` writes every verdict.

    python benchmarks/perf_cases_report.py [--json out.json] [--category NAME] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from tests.perf_cases_support import CATEGORIES, analysed, kind_findings, load_cases

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--category", choices=CATEGORIES)
    parser.add_argument("--verbose", action="store_true", help="print every finding of each side")
    args = parser.parse_args()

    cases = [c for c in load_cases() if args.category in (None, c.category)]
    rows, started = [], time.perf_counter()
    for case in cases:
        sides = {}
        for side in ("slow", "fixed"):
            result = analysed(case.folder / f"{side}.cu", case.arch, case.sizes)
            sides[side] = {"compiled": result.ok, "error": result.error,
                           "source_only": bool(getattr(result, "source_only", False)),
                           "kind": [f"{f.tool}: {f.evidence}" for f in kind_findings(case, side)],
                           "tools": sorted({f.tool for f in result.findings})}
            if args.verbose:
                print(f"--- {case.id} {side}")
                for finding in result.findings:
                    print(f"    [{finding.tool}] {finding.title}: {finding.evidence}")
        found = bool(sides["slow"]["kind"]) and not sides["fixed"]["kind"]
        rows.append({"case": case.id, "category": case.category, "source": case.source, "found": found, **sides})

    print(f"{'category':24} found")
    total = 0
    for category in CATEGORIES:
        mine = [r for r in rows if r["category"] == category]
        if not mine:
            continue
        hits = sum(r["found"] for r in mine)
        total += hits
        print(f"{category:24} {hits} of {len(mine)}")
    print(f"{'all':24} {total} of {len(rows)}  ({time.perf_counter() - started:.0f} s)")
    for row in rows:
        if row["found"]:
            continue
        why = "fires on the fix too: " + row["fixed"]["kind"][0] if row["slow"]["kind"] else \
            "silent on the slow program (tools that fired: " + ", ".join(row["slow"]["tools"]) + ")"
        print(f"  missed {row['case']}: {why}")
    for row in rows:
        for side in ("slow", "fixed"):
            if not row[side]["compiled"] or row[side]["source_only"]:
                print(f"  no compiled analysis of {row['case']}/{side}.cu: {row[side]['error']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
