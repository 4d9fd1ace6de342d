"""Turning what the judge observed into one verdict: integrity findings, failures by stage, CUDA faults.

Shared by the PyTorch and C judges so both decide the same way: a failed integrity check outranks a
wrong answer (a cheat that also gets the answer wrong is still a cheat), and a wrong answer outranks
a timing. Failures of candidate code arrive as the runner's report (stage, exception, message,
traceback): the judge names them, the runner never does.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.schema.verdict import ConfigResult, EvaluationResult, IntegrityFinding, KernelLaunch, Verdict

_CUDA_FAULT_WORDS = ("cuda error", "cudaerror", "cuda_error", "illegal memory access", "unspecified launch failure",
                     "device-side assert", "misaligned address", "illegal instruction", "an illegal",
                     "cudaErrorIllegalAddress".lower(), "launch failed", "hardware stack error")
TRACEBACK_CHARS = 6000


class JobFailure(Exception):  # noqa: N818 - a control-flow signal carrying the verdict, not an error type
    """Ends a job early with a verdict (compile/load/runtime error) and the evidence."""

    def __init__(self, verdict: Verdict, message: str, log: str = "", fatal: bool = False) -> None:
        super().__init__(message)
        self.verdict, self.message, self.log, self.fatal = verdict, message, log, fatal


def _is_cuda_fault(name: str | None, text: str) -> bool:
    if name in ("CUDARuntimeError", "CUDADriverError", "AcceleratorError"):
        return True
    text = text.lower()
    return any(word in text for word in _CUDA_FAULT_WORDS)


def _is_compile_failure(name: str | None, text: str) -> bool:
    return name in ("CompileException", "NVRTCError") or "Error building extension" in text


def failure_from_report(report: dict) -> JobFailure:
    """The verdict for candidate code that failed, from the runner's report of it."""
    stage = str(report.get("stage", "a call"))[:200]
    name = report.get("exception")
    name = str(name)[:80] if name else None
    message = str(report.get("message", ""))
    log = str(report.get("traceback", ""))[-TRACEBACK_CHARS:]
    first = message.strip().splitlines()[0] if message.strip() else ""
    summary = (f"{name}: {first}" if name else first)[:500]
    if report.get("syntax") and report.get("syntax_message"):
        return JobFailure(Verdict.LOAD_ERROR, f"Python syntax error at line {report.get('line')}: "
                                              f"{str(report['syntax_message'])[:300]}", log)
    if report.get("too_large"):
        return JobFailure(Verdict.INCORRECT, f"during {stage}: {message}", log)
    if report.get("missing_model"):
        return JobFailure(Verdict.LOAD_ERROR, message, log)
    if report.get("load_error"):
        return JobFailure(Verdict.LOAD_ERROR, message, log)
    if _is_compile_failure(name, message):
        return JobFailure(Verdict.COMPILE_ERROR, f"kernel compilation failed during {stage}: {summary}", log)
    cuda = bool(report.get("cuda_fault")) or _is_cuda_fault(name, message)
    if report.get("syntax") or stage == "import":
        verdict = Verdict.RUNTIME_ERROR if cuda else Verdict.LOAD_ERROR
        return JobFailure(verdict, f"{stage} failed: {summary}", log, fatal=cuda)
    if cuda:
        return JobFailure(Verdict.RUNTIME_ERROR, f"CUDA fault during {stage}: {summary}", log, fatal=True)
    return JobFailure(Verdict.RUNTIME_ERROR, f"{stage} raised {summary}", log)


def malformed(stage: str, detail: str) -> JobFailure:
    """A reply its request's model refused (`wire.replies`): the runner is the candidate's process, so this is
    the candidate's runtime error, naming what was malformed."""
    return JobFailure(Verdict.RUNTIME_ERROR, f"the candidate's process sent a malformed reply during {stage}: "
                                             f"{detail}")


def judged(findings: Findings, stages: Callable[[], None]) -> None:
    """Run a judge's stages; whatever the runner does to end them early becomes a JobFailure naming why:
    candidate code that failed, a process that ended, a malformed reply (the candidate's runtime error)."""
    from engine.verify.judge.session import CandidateError, RunnerLost, RunnerMisbehaved

    try:
        stages()
    except CandidateError as exc:
        raise failure_from_report(exc.report) from exc
    except RunnerLost as exc:
        raise JobFailure(Verdict.RUNTIME_ERROR, f"the candidate's process ended during {exc.stage}",
                         fatal=True) from exc
    except RunnerMisbehaved as exc:
        raise malformed(exc.stage, exc.detail) from exc


@dataclass
class Findings:
    """Integrity checks in the order they ran; one entry per check, failed if any observation failed."""

    items: dict[str, IntegrityFinding] = field(default_factory=dict)

    def passed(self, check: str, detail: str = "") -> None:
        self.items.setdefault(check, IntegrityFinding(check, True, detail))

    def failed(self, check: str, detail: str) -> None:
        existing = self.items.get(check)
        if existing is None or existing.passed:
            self.items[check] = IntegrityFinding(check, False, detail)

    def any_failed(self) -> bool:
        return any(not f.passed for f in self.items.values())

    def first_failure(self) -> IntegrityFinding | None:
        return next((f for f in self.items.values() if not f.passed), None)

    def as_list(self) -> list[IntegrityFinding]:
        return list(self.items.values())


@dataclass
class JobState:
    """What a harness accumulates while a job runs."""

    findings: Findings = field(default_factory=Findings)
    configs: list[ConfigResult] = field(default_factory=list)
    kernels: list[KernelLaunch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timed_config: str | None = None
    candidate_us: float | None = None
    baseline_us: float | None = None
    baseline_name: str | None = None
    load_seconds: float | None = None
    energy: dict | None = None
    fatal: bool = False
    speed_withheld: str | None = None  # why no speed is credited (the clock check could not decide)
    flag_reason: str | None = None  # what the judge saw that a person should review (the speed is held till then)
    stage_seconds: dict[str, float] = field(default_factory=dict)  # where the job's time went
    on_stage: Callable[[str, str], None] | None = None  # (stage, "start" | "end"): the pool watches the timing

    @contextlib.contextmanager
    def stage(self, name: str):
        started = time.perf_counter()
        if self.on_stage is not None:
            self.on_stage(name, "start")
        try:
            yield
        finally:
            self.stage_seconds[name] = self.stage_seconds.get(name, 0.0) + time.perf_counter() - started
            if self.on_stage is not None:
                self.on_stage(name, "end")


def final_result(state: JobState, device: str, seeds: list[int]) -> EvaluationResult:
    """The verdict from everything observed: integrity violation > incorrect > correct."""
    failure = state.findings.first_failure()
    wrong = next((c for c in state.configs if not c.ok), None)
    if failure is not None:
        verdict, message = Verdict.INTEGRITY_VIOLATION, f"integrity check {failure.check!r} failed: {failure.detail}"
    elif wrong is not None:
        where = "hidden configuration" if wrong.hidden else "configuration"
        errors = ""
        if wrong.max_abs_error is not None:
            errors = f" (max abs error {wrong.max_abs_error:.3g}, max rel error {wrong.max_rel_error:.3g})"
        verdict, message = Verdict.INCORRECT, f"wrong on {where} {wrong.name!r}{errors}: {wrong.message}"
    else:
        verdict = Verdict.CORRECT
        message = f"correct on {len(state.configs)} configurations"
        if state.candidate_us is not None:
            message += f"; {state.candidate_us:.1f} µs on {state.timed_config!r}"
            if state.baseline_us and not state.speed_withheld:
                message += f", {state.baseline_us / state.candidate_us:.2f}× vs {state.baseline_name}"
        if state.speed_withheld:
            message += "; no speed credited: the judge's clock could not corroborate the timing"
            state.notes.append(f"no speed credited: {state.speed_withheld}")
    speedup = (state.baseline_us / state.candidate_us) if (state.baseline_us and state.candidate_us) else None
    if state.speed_withheld:
        speedup = None
    return EvaluationResult(
        verdict=verdict, message=message, configs=state.configs, integrity=state.findings.as_list(),
        kernels=state.kernels, timed_config=state.timed_config, candidate_us=state.candidate_us,
        baseline_us=state.baseline_us, baseline_name=state.baseline_name,
        speedup=speedup if verdict == Verdict.CORRECT else None, device=device, seeds=seeds,
        load_seconds=state.load_seconds, notes=state.notes, energy=state.energy,
        flagged=bool(state.flag_reason) and verdict == Verdict.CORRECT, flag_reason=state.flag_reason or "",
        stage_seconds={k: round(v, 4) for k, v in state.stage_seconds.items()})


def failure_result(failure: JobFailure, state: JobState, device: str, seeds: list[int]) -> EvaluationResult:
    return EvaluationResult(verdict=failure.verdict, message=failure.message, log=failure.log, configs=state.configs,
                            integrity=state.findings.as_list(), kernels=state.kernels, device=device, seeds=seeds,
                            load_seconds=state.load_seconds, notes=state.notes,
                            stage_seconds={k: round(v, 4) for k, v in state.stage_seconds.items()})
