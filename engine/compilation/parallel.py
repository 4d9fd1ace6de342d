"""Builds many candidates at once on the CPU cores, so compiles overlap each other and the GPU's work.

Compilers run as child processes, so threads are enough to keep every core busy; results come
back in input order, or through `on_done` as each finishes (the verifier queues a GPU job then).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.compilation.candidate import CandidateBuild, build_candidate

if TYPE_CHECKING:
    from engine.problems.model import Problem


@dataclass(frozen=True)
class BuildRequest:
    problem: Problem
    source: str
    language: str


def default_jobs() -> int:
    """settings.build_jobs, where 0 means one per CPU core."""
    try:
        from engine.settings import get_settings

        jobs = get_settings().build_jobs
    except Exception:  # noqa: BLE001 - settings unavailable (bare device machine): use the cores
        jobs = 0
    return jobs or os.cpu_count() or 1


def build_executor(jobs: int | None = None) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=jobs or default_jobs(), thread_name_prefix="build")


def submit_build(executor: ThreadPoolExecutor, request: BuildRequest, **options) -> Future[CandidateBuild]:
    return executor.submit(build_candidate, request.problem, request.source, request.language, **options)


def build_many(requests: Sequence[BuildRequest], *, jobs: int | None = None, arch: str | None = None,
               cache_dir: Path | None = None, prebuild_inline: bool = False,
               on_done: Callable[[int, CandidateBuild], None] | None = None) -> list[CandidateBuild]:
    """Build every request in parallel; the list is in request order, `on_done(index, build)` fires as each ends."""
    options = {"arch": arch, "cache_dir": cache_dir, "prebuild_inline": prebuild_inline}
    results: list[CandidateBuild | None] = [None] * len(requests)
    with build_executor(jobs) as executor:
        futures = {submit_build(executor, r, **options): i for i, r in enumerate(requests)}
        for future in as_completed(futures):
            index = futures[future]
            results[index] = future.result()
            if on_done is not None:
                on_done(index, results[index])
    return [r for r in results if r is not None]
