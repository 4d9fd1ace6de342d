"""Static analysis time per candidate on one CPU core: the target is <= 2 s.

For every CUDA implementation in the library (and the test fixtures), `analyse_candidate` runs
twice: cold (empty build cache: nvcc + nvdisasm + parsing) and warm (the cached build: what a
re-analysis or a candidate the verifier already compiled costs). Wall time and CPU time (this
process plus its nvcc/nvdisasm children) are both reported: on a shared machine the wall time
measures the neighbours, the CPU time what one idle core would need. `--json PATH` writes it all.

    python benchmarks/static_analysis_speed.py [--all-cores] [--limit N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 2.0


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def candidates():
    from engine.problems import scan_all

    for problem in scan_all().problems:
        for impl in problem.implementations:
            if impl.device == "cuda":
                yield f"{problem.slug}/{impl.name}", problem, impl.source, impl.language
    for path in sorted((ROOT / "tests" / "fixtures" / "kernels").iterdir()):
        if path.suffix in (".cu", ".py"):
            yield f"fixture/{path.name}", None, path.read_text(), "python" if path.suffix == ".py" else "cuda"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all-cores", action="store_true", help="do not pin to one core")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--limit", type=int, default=None, help="only the first N candidates")
    options = parser.parse_args()
    if not options.all_cores and hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # nvcc children inherit it
    from engine.analysis import analyse_candidate

    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for index, (name, problem, source, language) in enumerate(candidates()):
            if options.limit is not None and index >= options.limit:
                break
            timings, cpu = [], []
            for _ in ("cold", "warm"):
                started, started_cpu = time.perf_counter(), cpu_seconds()
                report = analyse_candidate(problem, source, language, arch=options.arch, cache_dir=Path(scratch))
                timings.append(time.perf_counter() - started)
                cpu.append(cpu_seconds() - started_cpu)
            rows.append({"candidate": name, "cold_s": timings[0], "warm_s": timings[1], "cold_cpu_s": cpu[0],
                         "warm_cpu_s": cpu[1], "compile_s": report.compile_seconds, "ok": report.ok,
                         "kernels": len(report.kernels)})
            print(f"{name:45s} cold {timings[0]:6.2f} s (cpu {cpu[0]:5.2f})   warm {timings[1]:6.3f} s   "
                  f"{'ok' if report.ok else 'FAILED'}", flush=True)
    cold, warm = [r["cold_s"] for r in rows], [r["warm_s"] for r in rows]
    cold_cpu = [r["cold_cpu_s"] for r in rows]
    summary = {
        "candidates": len(rows), "target_s": TARGET_S,
        "cold_median_s": statistics.median(cold), "cold_max_s": max(cold),
        "cold_within_target": sum(t <= TARGET_S for t in cold),
        "warm_median_s": statistics.median(warm), "warm_max_s": max(warm),
        "warm_within_target": sum(t <= TARGET_S for t in warm),
        "cold_cpu_median_s": statistics.median(cold_cpu), "cold_cpu_max_s": max(cold_cpu),
        "cold_cpu_within_target": sum(t <= TARGET_S for t in cold_cpu), "one_core": not options.all_cores,
        "cpu_count": os.cpu_count(), "load_average": os.getloadavg(),
    }
    print(json.dumps(summary, indent=2))
    if options.json:
        options.json.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
