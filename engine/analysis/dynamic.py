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
