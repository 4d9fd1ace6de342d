"""On the device: what each group of the fixed ncu metric set costs in profile time, per candidate.

ncu splits a metric set into passes and replays the kernel once per pass; SASS-instrumented
metrics (`smsp__sass_*`) run a patched kernel that can be many times slower than the original.
When a candidate's profile runs over the 10 s target this says which group to blame: the whole
set is timed (watching only the candidate's process, and, as before, following its children too),
then the set without each group, beside the candidate run without ncu (the process's own start,
build-cache load and inputs) and the bare cost of importing torch and opening a CUDA context,
all in the same call.

    python benchmarks/ncu_metric_cost.py matmul-fp16/shared-tiling relu/naive [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.ncu_agreement import pick_config, prepare_target, target_command  # noqa: E402
from engine.analysis.profile.ncu import DEFAULT_METRICS, TENSOR_PATHS  # noqa: E402

GROUPS: dict[str, tuple[str, ...]] = {
    "sass FLOP counts": tuple(m for m in DEFAULT_METRICS if m.startswith("smsp__sass_thread_inst_executed_op_")),
    "sass shared instructions": tuple(m for m in DEFAULT_METRICS if m.startswith("smsp__sass_inst_executed_op_shared")),
    "shared wavefronts and conflicts": tuple(m for m in DEFAULT_METRICS if m.startswith("l1tex__data_")),
    "warp stalls": tuple(m for m in DEFAULT_METRICS if m.startswith("smsp__average_warps_issue_stalled_")),
    "tensor paths": tuple(TENSOR_PATHS.values()),
}


REPEATS = 3
BARE = {"import torch": "import torch",
        "import torch + CUDA context": "import torch; torch.zeros(1, device='cuda'); torch.cuda.synchronize()"}


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True, timeout=300)
    return round(time.perf_counter() - started, 2)


def time_variant(command: list[str], metrics: list[str], regex: str, launches: int, budget: float,
                 follow_children: bool = False) -> dict:
    from engine.analysis import profile_command

    started = time.perf_counter()
    profile = profile_command(command, metrics=metrics, budget_s=budget, kernel_regex=regex, launch_count=launches,
                              cwd=str(ROOT), follow_children=follow_children)
    return {"seconds": round(time.perf_counter() - started, 2), "ok": profile.ok, "reason": profile.reason,
            "metrics": len(metrics),
            "profiler_lines": [line for line in profile.log.splitlines() if line.startswith("==")][:6]}


def measure(entry: str, budget: float) -> dict:
    import torch

    from engine.problems import get_problem
    from engine.settings import get_settings

    slug, name = entry.split("/", 1)
    problem, settings = get_problem(slug), get_settings()
    impl, config = problem.implementation(name), pick_config(problem)
    major, minor = torch.cuda.get_device_capability()
    _, regex, launches, error = prepare_target(problem, impl, config, f"sm_{major}{minor}", settings)
    if error:
        return {"candidate": entry, "error": error}
    command = target_command(problem, impl, config)
    full = list(DEFAULT_METRICS)
    result = {"candidate": entry, "config": config.name, "without_ncu_s": [wall(command) for _ in range(REPEATS)],
              "bare_s": {name: wall([sys.executable, "-c", code]) for name, code in BARE.items()},
              "full": [time_variant(command, full, regex, launches, budget) for _ in range(REPEATS)],
              "full_following_children": [time_variant(command, full, regex, launches, budget, follow_children=True)
                                          for _ in range(REPEATS)],
              "without": {}}
    print(f"{entry} on {config.name}: no ncu {result['without_ncu_s']} s; {result['bare_s']}", flush=True)
    for variant in ("full", "full_following_children"):
        print(f"  {variant:40s} {[v['seconds'] for v in result[variant]]} s", flush=True)
    for group, members in GROUPS.items():
        kept = [m for m in DEFAULT_METRICS if m not in members]
        result["without"][group] = time_variant(command, kept, regex, launches, budget)
        print(f"  without {group:34s} {result['without'][group]}", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candidates", nargs="+", help="SLUG/IMPL")
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--json", type=Path)
    options = parser.parse_args()
    results = []
    for entry in options.candidates:
        results.append(measure(entry, options.budget))
        if options.json:
            options.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
