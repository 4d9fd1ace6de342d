"""Importing every PolyBench/C 4.2.1 kernel from a checkout, unchanged, as `refinery problems import` does.

Per kernel: imported or why not, its configurations (hidden ones starred), the reference's seconds on the
CPU at each (the generated reference.c built as the harness builds it, on the inputs of one check, in the
sandbox), whether the generated one-thread CUDA port compiles (nvcc, sm_90) and whether it gives the
program's own results when emulated on the CPU (its code compiled as C, the launch a plain call), the
configurations where the program's own results change with rounding (its reference built again with fused
multiply-adds and reordered sums, on the same inputs: no candidate can be judged there as the problem stands), and
the import's wall time.
With `--verify`, each imported problem's CUDA port is then checked by the verifier on every configuration
(correctness and integrity, no timing): on a machine with a GPU it runs; without one it reports needs_gpu.

    python benchmarks/polybench_import.py PATH [--json out.json] [--keep DIR] [--verify] [--only a,b]

PATH is a PolyBench/C checkout (its utilities/benchmark_list names the 30 kernels; without one every .c
file with main is taken). Problems go to a temporary folder unless --keep names one.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path


@dataclass
class Row:
    kernel: str
    imported: bool
    error: str | None = None
    configs: list[str] = field(default_factory=list)  # hidden ones end in *
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    port_compiles: bool | None = None
    port_matches: bool | None = None  # the port emulated on the CPU gives the program's results
    import_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the program's own results change with rounding, …
    rounding: list[str] = field(default_factory=list)  # configurations marked: the reference itself moves with rounding
    verdict: str | None = None  # --verify: the CUDA port's verdict
    verify_message: str = ""


def kernels(checkout: Path) -> list[Path]:
    listing = checkout / "utilities" / "benchmark_list"
    if listing.is_file():
        return [checkout / line.strip() for line in listing.read_text().splitlines() if line.strip()]
    from engine.problem_import.cimport import find_programs

    return find_programs(checkout)


def import_all(checkout: Path, dest: Path, only: set[str]) -> list[tuple[Row, object]]:
    from engine.problem_import.cimport import import_program

    rows = []
    for path in kernels(checkout):
        if only and path.stem not in only:
            continue
        started = time.perf_counter()
        done = import_program(path, dest)
        row = Row(path.stem, done.problem is not None, done.error, import_seconds=time.perf_counter() - started,
                  notes=[n.split(": ", 1)[-1] for n in done.notes], cpu_seconds=done.seconds,
                  warnings=[w.split(": ", 1)[-1] for w in done.warnings],
                  rounding=[name for name, check in done.rounding.items() if check.sensitive],
                  port_compiles=done.port_compiles, port_matches=done.port_matches)
        if done.problem is not None:
            row.configs = [c.name + ("*" if c.hidden else "") for c in done.problem.configs]
        rows.append((row, done.problem))
        print(_line(row), flush=True)
    return rows


def verify_ports(rows: list[tuple[Row, object]]) -> None:
    from engine.verify.evaluate import Verifier, VerifyOptions

    verifier = Verifier(options=VerifyOptions(timing=False, timeout_s=600))
    try:
        for row, problem in rows:
            if problem is None or not any(i.name == "naive" for i in problem.implementations):
                continue
            result = verifier.evaluate(problem, problem.implementation("naive").source, "cuda")
            row.verdict = result.verdict.value
            row.verify_message = (result.message or "").splitlines()[0][:200] if result.message else ""
            errors = [f"{c.name} {c.max_abs_error:.2g}/{c.max_rel_error:.2g}" for c in result.configs
                      if c.max_abs_error is not None]
            shown = "" if row.verdict == "correct" else row.verify_message
            print(f"{row.kernel:16} {row.verdict:14} max abs/rel error: {'; '.join(errors)} {shown}", flush=True)
    finally:
        verifier.close()


def _line(row: Row) -> str:
    if not row.imported:
        return f"{row.kernel:16} NOT IMPORTED  {row.error}"
    seconds = " ".join(f"{name}={value * 1e3:.2f}ms" for name, value in row.cpu_seconds.items())
    port = {True: "yes", False: "NO", None: "-"}[row.port_compiles]
    same = {True: "yes", False: "NO", None: "-"}[row.port_matches]
    return (f"{row.kernel:16} imported  {', '.join(row.configs):26} port compiles: {port:3} matches on CPU: {same:3} "
            f"import {row.import_seconds:5.1f} s  reference on the CPU: {seconds}"
            + (f"  ROUNDING-SENSITIVE on {', '.join(row.rounding)}" if row.rounding else ""))


def summary(rows: list[Row], seconds: float) -> str:
    imported = sum(r.imported for r in rows)
    ported = sum(bool(r.port_compiles) for r in rows)
    matching = sum(bool(r.port_matches) for r in rows)
    lines = [f"{imported}/{len(rows)} imported, {ported}/{len(rows)} CUDA ports compile, {matching}/{len(rows)} "
             f"give the program's results emulated on the CPU, {seconds:.0f} s in all "
             f"({seconds / max(len(rows), 1):.1f} s a kernel, {os.cpu_count()} cores), "
             f"{sum(bool(r.rounding) for r in rows)}/{len(rows)} whose own results change with rounding"]
    verified = [r for r in rows if r.verdict]
    if verified:
        correct = sum(r.verdict == "correct" for r in verified)
        lines.append(f"CUDA ports verified: {correct}/{len(verified)} correct")
    lines += [f"warning {r.kernel}: {w}" for r in rows for w in r.warnings]
    noted = [(r.kernel, n) for r in rows for n in r.notes]
    lines += [f"note {kernel}: {note}" for kernel, note in noted]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path)
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--keep", type=Path, help="import into this folder (DIR/c/<slug>) instead of a temporary one")
    parser.add_argument("--verify", action="store_true", help="then verify each CUDA port (needs a GPU to run it)")
    parser.add_argument("--only", default="", help="comma-separated kernel names")
    args = parser.parse_args()
    only = {k for k in args.only.split(",") if k}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        dest = args.keep or Path(scratch)
        rows = import_all(args.checkout, dest, only)
        elapsed = time.perf_counter() - started
        if args.verify:
            verify_ports(rows)
    print(summary([r for r, _ in rows], elapsed))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"seconds": elapsed, "cores": os.cpu_count(),
                                         "rows": [asdict(r) for r, _ in rows]}, indent=1))


if __name__ == "__main__":
    main()
