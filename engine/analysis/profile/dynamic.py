"""ncu around one verified candidate, inside the same walls as the verifier's runners.

A run calls this for each correct candidate when a GPU is present. The candidate (already built
and cached by the verification) is written to a `run_once` folder, and `ncu ... python -m
engine.untrusted.runner.run_once FOLDER` runs inside a runner's sandbox (its namespaces, its seccomp
filter, its limits, no secrets, no data folder), under a hard time budget that ends the sandbox
with everything in it. Only the candidate's own kernels are profiled, one launch each. Every
failure (no ncu, counters refused, a fault under the profiler, the budget) comes back as an
`NcuProfile` with its reason, never as an exception: the round keeps its static diagnostics and
says why it has no dynamic ones.
"""

from __future__ import annotations

import re
from pathlib import Path

from engine.analysis.profile.ncu import NcuProfile, profile_command
from engine.analysis.record import StaticReport

# ncu replays each kernel once per pass of the metric set (about 40 at most for ours, with a cache
# flush before each), so a kernel's own time counts that often; a profile keeps this share of the
# budget for it, the rest being the process's start and ncu's own work (~6 s on the H200).
REPLAY_PASSES = 40
KERNEL_SECONDS = 3.0


def profile_config(problem, timed: str | None, candidate_us: float | None,
                   kernel_seconds: float = KERNEL_SECONDS) -> str | None:
    """The configuration to profile: the timed one, unless its replays would not fit `kernel_seconds`;
    then the largest visible configuration whose work (FLOPs, else minimum bytes), scaled from the
    timed call, fits, or the smallest visible one. Hidden configurations are never profiled: what a
    profile says reaches the next prompt."""
    if timed is None:
        return None
    reference = problem.config(timed)
    fits = not candidate_us or candidate_us * 1e-6 * REPLAY_PASSES <= kernel_seconds
    if fits and not reference.hidden:
        return timed

    def work(config) -> float:
        return problem.flops(config) or problem.min_bytes(config) or 0.0

    visible = [c for c in problem.configs if not c.hidden and c.name != timed]
    if not visible:
        return timed
    base = work(reference)
    if not base or not candidate_us:
        return max(visible, key=work).name
    sized = sorted((work(c) / base * candidate_us * 1e-6 * REPLAY_PASSES, c.name) for c in visible)
    fitting = [name for seconds, name in sized if seconds <= kernel_seconds]
    return fitting[-1] if fitting else sized[0][1]


def kernel_selection(report: StaticReport) -> tuple[str | None, int]:
    """ncu's kernel-name filter for the candidate's own kernels and how many launches cover one call."""
    names = sorted({k.name for k in report.kernels})
    if not names:
        return None, 0
    regex = "^(" + "|".join(re.escape(name) for name in names) + r")\b"
    return regex, max(len(names), report.launches_per_call or 1)


def _ncu_folders(ncu: str | None) -> list[Path]:
    """The profiler's own install folders, shown read-only inside the sandbox."""
    if not ncu:
        return []
    path = Path(ncu).resolve()
    folders = [path.parent]
    for parent in path.parents:
        if parent.name.startswith("nsight-compute") or parent.name.startswith("NsightCompute"):
            folders.append(parent)
    return folders


def profile_candidate(problem, source: str, language: str, static: StaticReport, *, settings=None,
                      config: str | None = None) -> NcuProfile:
    """ncu's fixed metric set for one call of the candidate on `config` (default: the timed configuration)."""
    from engine.analysis.profile.ncu import _default_ncu
    from engine.sandbox import run as run_sandboxed
    from engine.sandbox import scratch as scratch_folders
    from engine.verify.once import run_once_spec
    from engine.verify.pool import PoolConfig
    from engine.verify.prepare import write_run_once_folder

    if settings is None:
        from engine.settings import get_settings

        settings = get_settings()
    regex, launches = kernel_selection(static)
    if regex is None:
        return NcuProfile(False, "no kernels found in the candidate's source to profile", [], 0.0, [])
    limits = PoolConfig.from_settings(settings).limits
    folder = scratch_folders.make("ncu", quota_mb=limits.scratch_mb)
    try:
        try:
            write_run_once_folder(problem, source, language, folder, config=config, repeats=1)
        except ValueError as exc:
            return NcuProfile(False, str(exc), [], 0.0, [])
        ncu = _default_ncu()
        spec = run_once_spec(folder, limits=limits, gpu=True,
                             read_only=_ncu_folders(ncu), hidden=[settings.home])
        command = spec.argv

        def launch(argv: list[str], timeout: float) -> tuple[int | None, str]:
            spec.argv = argv
            done = run_sandboxed(spec, timeout_s=timeout)
            output = (done.stdout + done.stderr).decode("utf-8", "replace")
            return (None if done.timed_out else done.returncode), output

        return profile_command(command, budget_s=settings.ncu_budget_s, kernel_regex=regex, launch_count=launches,
                               ncu=ncu, launcher=launch)
    finally:
        scratch_folders.remove(folder)
