"""The verification API: candidate source → one `EvaluationResult` with its verdict and evidence.

`evaluate` runs one candidate; `evaluate_stream` takes candidates as they arrive (an LLM's replies, as
each comes in), starts each one's build at once on the CPU cores and its worker job as soon as it is built
and a slot is free, so compiling the next candidates overlaps timing the current one and nothing waits for
the slowest reply; `evaluate_many` is the same for a list.
Order of judgement: static rules → build → (no GPU and it needs one: `needs_gpu`) → worker job
(correctness, runtime integrity checks, timing) → an implausible speedup is re-measured in a fresh
worker and flagged for review. Every result that reached a worker carries where it ran (`host`), and a
timed one says so in its notes.
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
from collections.abc import Callable, Hashable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from engine.compilation.candidate import CandidateBuild, build_candidate, language_of
from engine.compilation.parallel import build_executor
from engine.problems.model import Problem
from engine.sandbox import boundary
from engine.schema.verdict import EvaluationResult, IntegrityFinding, Verdict
from engine.verify.entry_point import missing_entry
from engine.verify.host import notes_for
from engine.verify.pool import JobOutcome, PoolConfig, WorkerPool, gpu_driver_present
from engine.verify.prepare import SeedPlan, TimingOptions, cpu_notes, make_job, rounding_caveat
from engine.verify.static_rules import check_static

LOG_CHARS = 30000
log = logging.getLogger("refinery.sandbox")
_NOISE = ("USDT:", "STAGE:", "[W kineto")  # profiler chatter in the worker log, not the candidate's
IN_FLIGHT = 64  # candidates of one call waiting at once for their build or a worker slot (a thread each)


def _clean_log(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(_NOISE))


def announce_boundary() -> None:
    """Say once per process what walls candidate code runs behind, and loudly what is missing."""
    where = boundary()
    if where.missing:
        log.warning("%s; missing: %s", where.summary(), "; ".join(where.missing))
    else:
        log.info(where.summary())


@dataclass(frozen=True)
class VerifyOptions:
    """How thoroughly to verify; the defaults are the product's (settings fill in the timing policy)."""

    trials: int = 2  # correctness trials per configuration, each with a fresh seed
    timing: bool = True
    timing_config: str | None = None
    baseline: str = "eager"  # eager | compile | both (PyTorch problems)
    timing_policy: TimingOptions | None = None  # None: from the settings
    timeout_s: float | None = None  # None: settings.worker_timeout_s
    static_checks: bool = True
    runtime_checks: bool = True
    recheck_suspicious: bool = True
    suspicious_speedup: float | None = None  # None: settings.suspicious_speedup
    time_all: bool = False  # PyTorch problems: also time the other visible configurations (shown, not the headline)


def warm_shared_headers(root: Path) -> threading.Thread:
    """Build the precompiled torch headers load_inline candidates share, beside the pool's start and off
    its path: otherwise the first such candidate waits for them (about 35 s on the H200 machine)."""
    def warm() -> None:
        from engine.compilation.shared_header import warm_headers

        try:
            for header in warm_headers(root):
                log.info("shared header %s", header)
        except Exception as exc:  # noqa: BLE001 - a candidate builds its header itself if this failed
            log.warning("shared headers not built ahead: %s", exc)

    thread = threading.Thread(target=warm, name="warm-shared-headers", daemon=True)
    thread.start()
    return thread


@dataclass
class Verifier:
    """A pool plus the settings it was made with; reuse one for many candidates (workers stay warm)."""

    pool: WorkerPool | None = None
    options: VerifyOptions = field(default_factory=VerifyOptions)
    settings: object = None
    builder: Callable[..., CandidateBuild] = build_candidate  # (problem, source, language, **options), on the CPU

    def __post_init__(self) -> None:
        if self.settings is None:
            from engine.settings import get_settings

            self.settings = get_settings()
        self._own_pool = self.pool is None

    def has_gpu(self) -> bool:
        """Asks the workers, unless there is no NVIDIA driver at all (then no worker is started for the answer)."""
        if self.pool is None and not gpu_driver_present():
            return False
        return self.ensure_pool().gpu

    def ensure_pool(self) -> WorkerPool:
        if self.pool is None:
            self.pool = WorkerPool(config=PoolConfig.from_settings(self.settings))
            announce_boundary()
            if self.pool.gpu:
                warm_shared_headers(self.settings.cache_dir / "build" / "pch")
        return self.pool

    def close(self) -> None:
        if self._own_pool and self.pool is not None:
            self.pool.close()
            self.pool = None

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the steps --------------------------------------------------------------------------------

    def static(self, problem: Problem, source: str, language: str) -> list[IntegrityFinding]:
        return check_static(source, language, problem.dtype) if self.options.static_checks else []

    def build(self, problem: Problem, source: str, language: str) -> CandidateBuild:
        return self.builder(problem, source, language, **self._build_options())

    def _build_options(self) -> dict:
        gpu = self.has_gpu()
        return {"arch": self.settings.gpu_arch, "cache_dir": self.settings.cache_dir / "build",
                "prebuild_inline": gpu, "with_baseline": gpu}

    def early_verdict(self, problem: Problem, source: str, language: str, static: list[IntegrityFinding],
                      build: CandidateBuild | None) -> EvaluationResult | None:
        """A verdict reached without running the candidate (static violation, compile error, needs a GPU)."""
        failed = [f for f in static if not f.passed and f.kind == "check"]
        if failed:
            return EvaluationResult(Verdict.INTEGRITY_VIOLATION, f"static rule {failed[0].check!r}: {failed[0].detail}",
                                    integrity=failed, log="\n".join(f"{f.check}: {f.detail}" for f in failed))
        if build is None:
            return None
        if problem.kind == "pytorch" and (missing := missing_entry("pytorch", source, parse=False)) is not None:
            return EvaluationResult(Verdict.LOAD_ERROR, missing, build_seconds=build.seconds, notes=list(build.notes))
        if not build.ok:
            return EvaluationResult(Verdict.COMPILE_ERROR, f"does not compile: {build.error}",
                                    log=build.log[-LOG_CHARS:], build_seconds=build.seconds, notes=list(build.notes))
        if build.needs_gpu and not self.has_gpu():
            kernels = ", ".join(build.kernel_names) or "no kernels found"
            return EvaluationResult(Verdict.NEEDS_GPU, f"compiled ({len(build.cubins)} cubin(s): {kernels}) and "
                                    "statically checked; running it needs a GPU", log=build.log[-LOG_CHARS:],
                                    build_seconds=build.seconds, notes=list(build.notes), device="cpu")
        return None

    def job_for(self, problem: Problem, build: CandidateBuild, source: str, seeds: SeedPlan | None = None):
        options, settings = self.options, self.settings
        device = "cuda" if self.has_gpu() else "cpu"
        policy = options.timing_policy or TimingOptions.from_settings(settings)
        timeout = options.timeout_s or settings.worker_timeout_s
        cpu_budget = timeout * max(2, os.cpu_count() or 1) + 60
        return make_job(problem, build, source, device, cache_dir=settings.cache_dir, trials=options.trials,
                        timing=policy if options.timing else None, timing_config=options.timing_config,
                        baseline=options.baseline, cpu_seconds=cpu_budget, arch=settings.gpu_arch,
                        checks=options.runtime_checks, seeds=seeds, time_all=options.time_all,
                        gpu_region=settings.verify_gpu_region)

    def finish(self, outcome: JobOutcome, build: CandidateBuild, static: list[IntegrityFinding]) -> EvaluationResult:
        """Map a job outcome to the result record, with the logs a user needs."""
        timeout = self.options.timeout_s or self.settings.worker_timeout_s
        judged = outcome.result
        if outcome.status == "ok" and judged is not None:
            result = judged
        elif outcome.status == "timeout":
            stage = judged.message.removeprefix("the candidate's process ended ") if judged is not None else ""
            where = f" ({stage})" if stage else ""
            result = EvaluationResult(Verdict.TIMEOUT, f"no result within {timeout:.0f} s{where}: the candidate's "
                                                       "process was killed with everything it started",
                                      configs=judged.configs if judged else [])
        elif outcome.status == "crashed":
            result = EvaluationResult(Verdict.RUNTIME_ERROR, f"the candidate's process died: {outcome.detail}",
                                      configs=judged.configs if judged else [],
                                      log=judged.log if judged else "")
        else:
            result = EvaluationResult(Verdict.RUNTIME_ERROR, f"the verifier could not start: {outcome.detail}",
                                      notes=["verifier error"])
        rules = [f for f in static if f.kind == "check"]
        passed = [IntegrityFinding("static-rules", True, "no static rule fired")] if (
            self.options.static_checks and not any(not f.passed for f in rules)) else []
        evidence = [f for f in static if f.kind == "evidence"]
        result.integrity = passed + [f for f in rules if not f.passed] + evidence + result.integrity
        result.notes = list(result.notes) + boundary().notes()
        result.host = outcome.host
        timed = next((c.candidate for c in result.configs if c.candidate is not None), None)
        result.notes += notes_for(outcome.host, timed.clock if timed is not None else None)
        result.build_seconds = build.seconds
        result.notes = list(build.notes) + list(result.notes)
        parts = [result.log, _clean_log(outcome.log).strip()]
        if build.log and result.verdict in (Verdict.COMPILE_ERROR, Verdict.LOAD_ERROR):
            parts.insert(0, build.log)
        result.log = "\n".join(p for p in parts if p)[-LOG_CHARS:]
        if result.device in (None, "cuda"):
            result.device = self.device_name()
        if result.torch_version is None:
            result.torch_version = getattr(self.ensure_pool().info, "torch", None) or None  # timings are of that build
        return result

    def device_name(self) -> str:
        info = self.ensure_pool().info
        return info.device or "cpu"

    def recheck(self, problem: Problem, build: CandidateBuild, source: str, static: list[IntegrityFinding],
                result: EvaluationResult) -> EvaluationResult:
        """Re-measure an implausible speedup in a fresh runner with new seeds; flag it either way (a flagged
        result earns no speed reward and enters no dataset until a person clears it)."""
        threshold = self.options.suspicious_speedup or self.settings.suspicious_speedup
        if not (self.options.recheck_suspicious and result.speedup and result.speedup > threshold):
            return result
        outcome = self.ensure_pool().run(self.job_for(problem, build, source), self.options.timeout_s, fresh=True)
        again = self.finish(outcome, build, static)
        first, earlier = result.speedup, [r for r in (result.flag_reason, again.flag_reason) if r]
        if again.verdict == Verdict.CORRECT and again.speedup:
            reason = (f"speedup {first:.1f}× is over {threshold:g}×: re-measured in a fresh process with new inputs: "
                      f"{again.speedup:.1f}×; review before trusting it")
        else:
            reason = f"speedup {first:.1f}× did not reproduce in a fresh process ({again.verdict}: {again.message})"
        again.flagged = True
        again.flag_reason = "; ".join(dict.fromkeys([reason, *earlier]))  # what the judge saw either time, kept
        return again

    def evaluate(self, problem: Problem, source: str, language: str | None = None) -> EvaluationResult:
        language = language or ("python" if problem.kind == "pytorch" else "cuda")
        static = self.static(problem, source, language)
        early = self.early_verdict(problem, source, language, static, None)
        if early is not None:
            return early
        build = self.build(problem, source, language)
        return self.run_built(problem, source, static, build)

    def run_built(self, problem: Problem, source: str, static: list[IntegrityFinding],
                  build: CandidateBuild, seeds: SeedPlan | None = None) -> EvaluationResult:
        early = self.early_verdict(problem, source, build.language, static, build)
        if early is not None:
            return early
        job = self.job_for(problem, build, source, seeds)
        try:
            outcome = self.ensure_pool().run(job, self.options.timeout_s)
        finally:
            shutil.rmtree(Path(job.scratch_dir), ignore_errors=True)
        result = self.finish(outcome, build, static)
        result.notes = list(result.notes) + cpu_notes(problem, job.device)
        if result.verdict == Verdict.INCORRECT and (caveat := rounding_caveat(problem, result.configs)):
            result.message = f"{result.message} — {caveat}"
        return self.recheck(problem, build, source, static, result)

    def _run_when_built(self, problem: Problem, source: str, static: list[IntegrityFinding],
                        build: Future, seeds: SeedPlan) -> EvaluationResult:
        return self.run_built(problem, source, static, build.result(), seeds)

    def evaluate_many(self, problem: Problem, candidates: Sequence[tuple[str, str]]) -> list[EvaluationResult]:
        """(source, language) pairs → results in the same order; builds overlap the workers' jobs."""
        results = self.evaluate_stream(problem, ((i, s, lang) for i, (s, lang) in enumerate(candidates)))
        return [results[i] for i in range(len(candidates))]

    def evaluate_stream(self, problem: Problem, arrivals: Iterable[tuple[Hashable, str, str]]
                        ) -> dict[Hashable, EvaluationResult]:
        """(key, source, language) triples, taken as they come → results by key.

        `arrivals` may block between items (an iterator fed by LLM replies as each completes): every candidate
        taken is checked statically and its build started before the next is awaited, and its worker job
        runs once it is built and a slot is free; only the return waits for the last one. All share one
        seed plan. If taking an arrival raises (a stop, Ctrl-C), nothing queued starts, what runs ends, and
        the exception goes on.
        """
        options: dict | None = None  # asked of the pool at the first build: a step of failed replies starts none
        seeds = SeedPlan.fresh(problem, self.options.trials)
        results: dict[Hashable, EvaluationResult] = {}
        runs: dict[Hashable, Future] = {}
        width = max(getattr(self.pool, "size", 1), IN_FLIGHT)
        with build_executor() as builds, ThreadPoolExecutor(max_workers=width, thread_name_prefix="evaluate") as runner:
            try:
                for key, source, language in arrivals:
                    static = self.static(problem, source, language)
                    early = self.early_verdict(problem, source, language, static, None)
                    if early is not None:
                        results[key] = early
                        continue
                    options = options or self._build_options()
                    build = builds.submit(self.builder, problem, source, language, **options)
                    runs[key] = runner.submit(self._run_when_built, problem, source, static, build, seeds)
                results.update({key: run.result() for key, run in runs.items()})
            except BaseException:
                builds.shutdown(wait=False, cancel_futures=True)
                runner.shutdown(wait=False, cancel_futures=True)
                raise
        return results


def evaluate(problem: Problem, source: str, language: str | None = None, *, pool: WorkerPool | None = None,
             options: VerifyOptions | None = None) -> EvaluationResult:
    """Verify one candidate. Pass a long-lived `pool` when verifying many (workers stay warm)."""
    with Verifier(pool=pool, options=options or VerifyOptions()) as verifier:
        return verifier.evaluate(problem, source, language)


def evaluate_file(problem: Problem, path: Path, *, pool: WorkerPool | None = None,
                  options: VerifyOptions | None = None) -> EvaluationResult:
    return evaluate(problem, Path(path).read_text(), language_of(path), pool=pool, options=options)


def evaluate_many(problem: Problem, candidates: Sequence[tuple[str, str]], *, pool: WorkerPool | None = None,
                  options: VerifyOptions | None = None) -> list[EvaluationResult]:
    """Verify many candidates of one problem; compiles run in parallel while workers run jobs."""
    with Verifier(pool=pool, options=options or VerifyOptions()) as verifier:
        return verifier.evaluate_many(problem, candidates)
