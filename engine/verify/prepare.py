"""Parent side: a problem, a built candidate and the options → the self-contained `Job` a worker runs.

Everything that needs the problem library or the settings is decided here: fresh seeds (from
os.urandom, recorded, never known to the candidate), evaluated C argument sizes, tolerances, the
timed configuration and baselines, the names of the candidate's own kernels.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from engine import python_ast
from engine.compilation.candidate import CandidateBuild, build_candidate
from engine.compilation.inline import torch_arch_list
from engine.problems.c_args import arg_specs
from engine.problems.model import Config, Problem
from engine.verify.judge.job import CArgSpec, ConfigSpec, Job, TimingSpec
from engine.wire.policy import TrialPolicy
from engine.wire.randomness import draws_random_numbers

CPU_TIMING_MAX_BYTES = 64 * 2**20  # on a CPU, time the largest configuration up to this many bytes
CPU_TIMING_MAX_FLOPS = 5e8  # … and this much work (a naive C loop runs ~1 GFLOP/s: a call of under a second)
CPU_CHECK_MAX_FLOPS = 4e9  # on a CPU, configurations with more work than this are not run at all


def cpu_sized(problem: Problem) -> tuple[list[Config], list[Config]]:
    """(the configurations a CPU runs, those it leaves out): on a CPU a configuration sized for a GPU
    (a 1536³ GEMM is 7 GFLOP, minutes for a naive loop) would only time out. The smallest configuration
    and at least one hidden one always stay, so correctness is still checked at a size not shown."""
    def work(config: Config) -> float:
        return problem.flops(config) or 0.0

    kept = [c for c in problem.configs if work(c) <= CPU_CHECK_MAX_FLOPS]
    hidden = [c for c in problem.configs if c.hidden]
    if hidden and not any(c.hidden for c in kept):
        kept.append(min(hidden, key=work))
    smallest = min(problem.configs, key=work)
    if smallest not in kept:
        kept.append(smallest)
    kept = [c for c in problem.configs if c in kept]
    return kept, [c for c in problem.configs if c not in kept]


def cpu_notes(problem: Problem, device: str) -> list[str]:
    """What a CPU verdict did not check, in words, for its notes."""
    if device != "cpu":
        return []
    _, skipped = cpu_sized(problem)
    notes = [f"not run on the CPU: configuration {c.name!r} ({(problem.flops(c) or 0) / 1e9:.1f} GFLOP, over the "
             f"CPU budget of {CPU_CHECK_MAX_FLOPS / 1e9:g} GFLOP; a GPU checks it)" for c in skipped]
    if any(c.name == WRITTEN_CONFIG for c in skipped):
        notes.append(f"timed on {timed_config(problem, device).name!r} instead of the sizes as written, which are "
                     "over the CPU budget")
    return notes


def rounding_caveat(problem: Problem, configs) -> str | None:
    """For an `incorrect` verdict: where the first wrong configuration's mismatch is in an output whose reference
    values change with rounding (found when the problem was imported), the words saying that the verdict cannot
    tell a rounding difference from a bug there. `configs` are the verdict's ConfigResults."""
    wrong = next((c for c in configs if not c.ok), None)
    if wrong is None:
        return None
    try:
        marked = problem.config(wrong.name).rounding_sensitive
    except KeyError:
        return None
    array = (wrong.first_mismatch or "").split(" at ", 1)[0]
    if not marked or (array and array not in marked):
        return None
    return (f"the reference's own {', '.join(marked)} on {wrong.name!r} change with rounding (found when the problem "
            "was imported: ill-conditioned inputs), so this mismatch may be rounding, not a bug; the problem needs "
            "other inputs (inputs.py) or a wider tolerance to judge it")


POLICY_SETTINGS = {"min_trials": "timing_min_trials", "min_seconds": "timing_min_seconds",
                   "max_trials": "timing_max_trials", "target_ci": "timing_target_ci"}  # TrialPolicy field: setting


def policy_from_settings(settings) -> TrialPolicy:
    """The trial policy the settings ask for: the one place settings become a `TrialPolicy` (the settings
    import nothing of the engine); a field no setting names keeps the record's own default."""
    return TrialPolicy(**{name: getattr(settings, setting) for name, setting in POLICY_SETTINGS.items()})


@dataclass(frozen=True)
class TimingOptions:
    """The parent's timing choices: how trials are run (`policy`, which the job carries to both sides) and
    the NVML energy loop per side after timing (GPU only; 0: none)."""

    policy: TrialPolicy = field(default_factory=TrialPolicy)
    energy_seconds: float = 0.0

    @classmethod
    def from_settings(cls, settings) -> TimingOptions:
        return cls(policy_from_settings(settings), energy_seconds=settings.energy_seconds)


def new_seed() -> int:
    """63 random bits from the OS: unpredictable to the candidate, valid for torch and numpy."""
    return int.from_bytes(os.urandom(8), "little") >> 1


@dataclass(frozen=True)
class SeedPlan:
    """The seeds of one evaluation, or of a batch: candidates of one batch share them, so each reference
    output is computed once per batch (the worker caches C reference outputs by seed). Still fresh per
    batch and never shown to a candidate."""

    init: int
    configs: dict[str, list[int]]
    timing: int

    @classmethod
    def fresh(cls, problem: Problem, trials: int = 2) -> SeedPlan:
        return cls(new_seed(), {c.name: [new_seed() for _ in range(trials)] for c in problem.configs}, new_seed())


WRITTEN_CONFIG = "as-written"  # an imported KernelBench file's sizes as its author wrote them


def timed_config(problem: Problem, device: str, name: str | None = None) -> Config:
    """The configuration timings are reported on: the sizes as written for an imported KernelBench file
    (the figure KernelBench, papers and leaderboards report), else the largest (on a CPU, the largest
    that is affordable)."""
    if name:
        return problem.config(name)
    written = next((c for c in problem.configs if c.name == WRITTEN_CONFIG), None)
    if device == "cuda":
        return written or problem.largest_config
    kept, _ = cpu_sized(problem)
    if written is not None and written in kept:
        return written
    if problem.bytes_expr is None and problem.flops_expr is None:
        return problem.largest_config  # no model of the work: cpu_sized kept every configuration
    affordable = [c for c in kept if (problem.min_bytes(c) or 0) <= CPU_TIMING_MAX_BYTES
                  and (problem.flops(c) or 0) <= CPU_TIMING_MAX_FLOPS]
    return (max(affordable, key=lambda c: (problem.flops(c) or 0, problem.min_bytes(c) or 0)) if affordable
            else min(kept, key=lambda c: problem.flops(c) or 0))


def _also_timed(problem: Problem, configs: list[Config], chosen: Config) -> list[str]:
    """The visible configurations besides the timed one (PyTorch problems: shown beside the headline)."""
    if problem.kind != "pytorch":
        return []
    return [c.name for c in configs if not c.hidden and c.name != chosen.name]


def triton_kernel_names(source: str) -> list[str]:
    try:
        tree = python_ast.parse(source)
    except SyntaxError:
        return []
    return [node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            and any("jit" in ast.unparse(d) for d in node.decorator_list)]


def _c_args(problem: Problem, config: Config) -> list[CArgSpec]:
    return [CArgSpec(s.name, s.base_type, s.is_array, s.intent, s.size, s.value, s.init)
            for s in arg_specs(problem, config)]


def baselines_for(problem: Problem, build: CandidateBuild, device: str, baseline: str) -> list[str]:
    """Speed baselines, the one the speedup is against first."""
    if problem.kind == "pytorch":
        return ["compile", "eager"] if baseline == "compile" else (["eager", "compile"] if baseline == "both"
                                                                   else ["eager"])
    if device == "cuda" and build.flavor == "cuda-library":
        return (["naive-cuda"] if build.baseline_library else []) + ["c-reference"]
    return ["c-reference"]


def make_job(problem: Problem, build: CandidateBuild, source: str, device: str, *, cache_dir: Path,
             trials: int = 2, timing: TimingOptions | None = TimingOptions(), timing_config: str | None = None,
             baseline: str = "eager", cpu_seconds: float = 600.0, arch: str = "sm_90", checks: bool = True,
             mode: str = "evaluate", seeds: SeedPlan | None = None, time_all: bool = False,
             gpu_region: bool = False) -> Job:
    """The job for one candidate; `timing=None` skips timing; `seeds` shares a batch's seeds."""
    seeds = seeds or SeedPlan.fresh(problem, trials)
    run_configs = problem.configs if device == "cuda" else cpu_sized(problem)[0]
    configs = [ConfigSpec(c.name, c.hidden, dict(c.params), list(seeds.configs[c.name]),
                          _c_args(problem, c) if problem.kind == "c" else []) for c in run_configs]
    timing_spec = None
    if timing is not None:
        chosen = timed_config(problem, device, timing_config)
        baselines = baselines_for(problem, build, device, baseline)
        timing_spec = TimingSpec(chosen.name, seeds.timing, timing.policy, baselines,
                                 energy_seconds=timing.energy_seconds if device == "cuda" else 0.0,
                                 also=_also_timed(problem, run_configs, chosen) if time_all else [])
    rtol, atol = problem.tolerance
    own = list(build.kernel_names) + (triton_kernel_names(source) if build.flavor == "triton" else [])
    job = Job(kind=problem.kind, device=device, candidate_source=source, candidate_language=build.language,
              configs=configs, init_seed=seeds.init, dtype=problem.dtype, rtol=rtol, atol=atol, mode=mode,
              reference_source=problem.reference_source if problem.kind == "pytorch" else "",
              reference_path=str(problem.reference_path),
              candidate_library=str(build.library) if build.library else None,
              reference_library=str(build.reference_library) if build.reference_library else None,
              baseline_library=str(build.baseline_library) if build.baseline_library else None,
              entry=problem.entry, inputs_source=problem.inputs_path.read_text() if problem.inputs_path else None,
              allowed_torch_ops=list(problem.allowed_torch_ops), own_kernels=own, flavor=build.flavor,
              extensions_dir=str(build.extensions_dir) if build.extensions_dir else None, timing=timing_spec,
              checks=checks, profile=checks, cache_dir=str(cache_dir), cpu_seconds=cpu_seconds,
              arch_list=torch_arch_list(arch),
              reseed_calls=problem.kind == "pytorch" and draws_random_numbers(problem.reference_source),
              gpu_region=gpu_region and device == "cuda")
    job.scratch_dir = str(Path(cache_dir) / "verify" / "jobs" / job.job_id)
    return job


RUN_ONCE_LIBRARY = "built.so"


def write_run_once_folder(problem: Problem, source: str, language: str, folder: Path, *, config: str | None = None,
                          repeats: int = 5, device: str = "cuda") -> Path:
    """Build the candidate and fill `folder` with what `python -m engine.untrusted.runner.run_once FOLDER`
    takes (ncu wraps that process): `job.json` (the runner's view of the candidate, one configuration,
    a seed), and the candidate's library or its load_inline build."""
    from engine.settings import get_settings

    settings = get_settings()
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    build = build_candidate(problem, source, language, prebuild_inline=device == "cuda")
    if not build.ok:
        raise ValueError(f"the candidate does not build: {build.error}")
    chosen = timed_config(problem, device, config)
    job = make_job(problem, build, source, device, cache_dir=settings.cache_dir, trials=1, timing=None,
                   arch=settings.gpu_arch, checks=False, mode="run_once")
    job.configs = [c for c in job.configs if c.name == chosen.name]
    for c in job.configs:
        c.hidden = False  # the one configuration asked for is the runner's to see
    spec = job.candidate_spec()
    plan = {"spec": spec.to_json(), "config": chosen.name, "seed": job.configs[0].seeds[0], "init_seed": job.init_seed,
            "repeats": repeats}
    (folder / "job.json").write_text(json.dumps(plan, indent=1))
    if build.library is not None:
        # not candidate.so: the runner writes that name itself, in a folder it owns (this file is ours)
        shutil.copyfile(build.library, folder / RUN_ONCE_LIBRARY)
    if build.extensions_dir is not None and Path(build.extensions_dir).is_dir():
        shutil.copytree(build.extensions_dir, folder / "ext", dirs_exist_ok=True)
    return folder
