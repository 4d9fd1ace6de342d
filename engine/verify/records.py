"""What verification returns: one verdict per candidate with the evidence a user needs to see why.

These records cross the process boundary (worker → parent → DB), so they are plain dataclasses
of JSON-friendly values; `to_json()` gives what the `evaluation` table stores.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from enum import StrEnum

from engine.verify.host import HostRecord


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


SAMPLES_KEPT = 256  # trials kept per timing (every k-th in time order): enough for a rank test between runs


@dataclass
class TimingStats:
    """Per-launch CUDA-event (or host-clock on CPU) times of one callable on one configuration."""

    median_us: float
    iqr_us: float
    mean_us: float
    min_us: float
    trials: int
    wall_us: float | None = None  # the judge's own clock per trial (flush included): the cross-check of the events
    host_us: float | None = None  # older records: host time to issue one call in the worker's own wall loop
    clock: str = "cuda-events"  # cuda-events | perf-counter
    unexplained_us: float | None = None  # per trial: judge's clock minus events minus the baseline's loop overhead
    samples_us: list[float] | None = None  # the trials themselves (thinned to SAMPLES_KEPT), for tests between runs

    @classmethod
    def from_json(cls, data: dict | None) -> TimingStats | None:
        return None if data is None else cls(**data)

    @classmethod
    def from_samples(cls, times_us: list[float], clock: str, wall_us: float | None = None,
                     unexplained_us: float | None = None) -> TimingStats:
        step = max(1, math.ceil(len(times_us) / SAMPLES_KEPT))
        ordered = sorted(times_us)
        if len(ordered) >= 4:
            q = statistics.quantiles(ordered, n=4, method="inclusive")
            iqr = q[2] - q[0]
        else:
            iqr = ordered[-1] - ordered[0]
        return cls(median_us=statistics.median(ordered), iqr_us=iqr, mean_us=statistics.fmean(ordered),
                   min_us=ordered[0], trials=len(ordered), wall_us=wall_us, clock=clock,
                   unexplained_us=unexplained_us, samples_us=[round(t, 4) for t in times_us[::step]])

    @property
    def cv(self) -> float:
        return self.iqr_us / 1.349 / self.median_us if self.median_us else 0.0


@dataclass
class ConfigResult:
    name: str
    hidden: bool
    ok: bool
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    first_mismatch: str | None = None  # "output 0 at [12, 7]: got 0.5, expected 0.25"
    message: str = ""
    candidate: TimingStats | None = None
    baselines: dict[str, TimingStats] = field(default_factory=dict)  # eager, compile, c-reference, naive-cuda
    seeds: list[int] = field(default_factory=list)  # the correctness trials' input seeds

    @classmethod
    def from_json(cls, data: dict) -> ConfigResult:
        data = dict(data)
        data["candidate"] = TimingStats.from_json(data.get("candidate"))
        data["baselines"] = {k: TimingStats.from_json(v) for k, v in (data.get("baselines") or {}).items()}
        return cls(**data)


@dataclass
class IntegrityFinding:
    check: str  # e.g. "output-poison", "input-mutation", "result-caching", "kernel-coverage"
    passed: bool
    detail: str = ""
    kind: str = "check"  # check (decides the verdict) | evidence (a static rule the runtime checks decided)


@dataclass
class KernelLaunch:
    """A GPU kernel the profiler saw while the candidate ran, and its share of the GPU time."""

    name: str
    calls: int
    total_us: float
    share: float
    own: bool  # compiled from the candidate's source (not a torch/aten kernel)


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
        data = dict(data)
        data["verdict"] = Verdict(data["verdict"])
        data["configs"] = [ConfigResult.from_json(c) for c in data.get("configs", [])]
        data["integrity"] = [IntegrityFinding(**f) for f in data.get("integrity", [])]
        data["kernels"] = [KernelLaunch(**k) for k in data.get("kernels", [])]
        data["host"] = HostRecord.from_json(data.get("host"))
        return cls(**data)

    @property
    def own_kernel_share(self) -> float | None:
        return sum(k.share for k in self.kernels if k.own) if self.kernels else None

    def to_json(self) -> dict:
        data = asdict(self)
        data["verdict"] = str(self.verdict)
        return data
