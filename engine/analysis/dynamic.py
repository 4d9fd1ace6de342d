"""ncu around one verified candidate, inside the same walls as the verifier's workers.

A run calls this for each correct candidate when a GPU is present. The candidate (already built
and cached by the verification) is written as a `run_once` job, and `ncu ... python -m
engine.verify.run_once JOB LIMITS` runs it once on the timed configuration in a scratch folder,
with the workers' environment (no secrets, no database URL), their resource limits and a hard
time budget that kills the whole process group. Only the candidate's own kernels are profiled,
one launch each. Every failure (no ncu, counters refused, a fault under the profiler, the
budget) comes back as an `NcuProfile` with its reason, never as an exception: the round keeps
its static diagnostics and says why it has no dynamic ones.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from engine.analysis.ncu import NcuProfile, profile_command
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


def profile_candidate(problem, source: str, language: str, static: StaticReport, *, settings=None,
                      config: str | None = None) -> NcuProfile:
    """ncu's fixed metric set for one call of the candidate on `config` (default: the timed configuration)."""
    from engine.verify.pool import PoolConfig
    from engine.verify.prepare import write_run_once_job
    from engine.verify.sandbox import cache_env, clean_env

    if settings is None:
        from engine.settings import get_settings

        settings = get_settings()
    regex, launches = kernel_selection(static)
    if regex is None:
        return NcuProfile(False, "no kernels found in the candidate's source to profile", [], 0.0, [])
    root = Path(settings.cache_dir) / "verify"
    root.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="ncu-", dir=root))
    try:
        try:
            job = write_run_once_job(problem, source, language, folder / "job.json", config=config, repeats=1)
        except ValueError as exc:
            return NcuProfile(False, str(exc), [], 0.0, [])
        limits = PoolConfig.from_settings(settings).limits
        command = [sys.executable, "-m", "engine.verify.run_once", str(job), json.dumps(limits.to_json())]
        env = clean_env(folder, **cache_env(settings.cache_dir))
        return profile_command(command, budget_s=settings.ncu_budget_s, kernel_regex=regex, launch_count=launches,
                               env=env, cwd=str(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
