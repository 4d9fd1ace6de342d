"""What verification returns: one verdict per candidate with the evidence a user needs to see why.

These records cross the process boundary (worker → parent → DB), so they are plain dataclasses
of JSON-friendly values; `to_json()` gives their JSON and `from_json` reads it back under the one
reading policy of stored records (`engine.schema.policy`). The parts an `evaluation` row stores on
their own (`ConfigResult`, `TimingStats`, `IntegrityFinding`, `KernelLaunch`, `HostRecord`) are
defined with the row's schema in `engine.schema.evaluation`, where db and the app read them too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum

from engine.schema.evaluation import (
    SAMPLES_KEPT,
    ConfigResult,
    HostRecord,
    IntegrityFinding,
    KernelLaunch,
    TimingStats,
)
from engine.schema.policy import read_record

__all__ = ["SAMPLES_KEPT", "ConfigResult", "EvaluationResult", "HostRecord", "IntegrityFinding", "KernelLaunch",
           "TimingStats", "Verdict", "shared_out", "without_profiler_marker"]


class Verdict(StrEnum):
    COMPILE_ERROR = "compile_error"
    LOAD_ERROR = "load_error"
    RUNTIME_ERROR = "runtime_error"  # includes CUDA faults and worker crashes
    TIMEOUT = "timeout"
    INCORRECT = "incorrect"
    INTEGRITY_VIOLATION = "integrity_violation"
    CORRECT = "correct"
    NEEDS_GPU = "needs_gpu"  # compiled and analysed on a machine with no GPU; not executed
    PROPOSAL_ERROR = "proposal_error"  # no candidate to run: reply without code, truncated, endpoint down

    @property
    def is_failure(self) -> bool:
        return self not in (Verdict.CORRECT, Verdict.NEEDS_GPU)


# The range the profiler opens around one call; kineto mirrors it on the GPU, where it is no kernel.
PROFILER_MARKER = "refinery::call"


def shared_out(kernels: list[tuple[str, int, float, bool]]) -> list[KernelLaunch]:
    """(name, calls, total µs, own) per kernel → launches with their share of the GPU time, longest first."""
    total = sum(t for _, _, t, _ in kernels)
    launches = [KernelLaunch(name=name[:200], calls=calls, total_us=t, share=(t / total) if total else 0.0, own=own)
                for name, calls, t, own in kernels]
    return sorted(launches, key=lambda k: -k.total_us)


def without_profiler_marker(kernels: list[KernelLaunch]) -> list[KernelLaunch]:
    """Kernel lists measured before the marker was told apart from kernels carry it, with the call's
    whole time, so every share reads half of what it is: drop it and share the time anew."""
    rest = [k for k in kernels if k.name != PROFILER_MARKER]
    if len(rest) == len(kernels):
        return kernels
    return shared_out([(k.name, k.calls, k.total_us, k.own) for k in rest])


@dataclass
class EvaluationResult:
    verdict: Verdict
    message: str
    log: str = ""
    configs: list[ConfigResult] = field(default_factory=list)
    integrity: list[IntegrityFinding] = field(default_factory=list)
    kernels: list[KernelLaunch] = field(default_factory=list)
    timed_config: str | None = None
    candidate_us: float | None = None
    baseline_us: float | None = None
    baseline_name: str | None = None
    speedup: float | None = None
    device: str | None = None
    flagged: bool = False
    flag_reason: str = ""
    build_seconds: float | None = None
    seeds: list[int] = field(default_factory=list)
    load_seconds: float | None = None  # worker: module import/library load plus the first call (JIT compiles)
    worker_seconds: float | None = None  # worker: the whole job
    notes: list[str] = field(default_factory=list)
    energy: dict | None = None  # judge: NVML joules per call, candidate and baseline (an EnergyRecord.to_json())
    stage_seconds: dict = field(default_factory=dict)  # judge: seconds per stage (load, correctness, …)
    host: HostRecord | None = None  # pool: the cores it ran on and what else ran while it was timed
    torch_version: str | None = None  # the torch build that ran it (figures of two builds are not one series)

    @property
    def failed_config(self) -> ConfigResult | None:
        return next((c for c in self.configs if not c.ok), None)

    @property
    def failed_checks(self) -> list[IntegrityFinding]:
        return [f for f in self.integrity if not f.passed]

    @classmethod
    def from_json(cls, data: dict) -> EvaluationResult:
        """The record from `to_json`'s form, under `engine.schema.policy` (newer keys ignored, bad values raise)."""
        return read_record(cls, data)

    @property
    def own_kernel_share(self) -> float | None:
        return sum(k.share for k in self.kernels if k.own) if self.kernels else None

    def to_json(self) -> dict:
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        return data
