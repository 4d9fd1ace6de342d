"""The stored `ncu` diagnostic: what Nsight Compute measured around one candidate call, or why not.

A run stores one per profiled round and the dashboard reads it back, so the keys such a row holds
are the fields of `NcuRecord` and are written nowhere else.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from engine.analysis.profile.agreement import KernelAgreement, compare_kernels
from engine.analysis.profile.ncu import NcuProfile, NcuSummary
from engine.analysis.record import StaticReport
from engine.schema.policy import read_record


@dataclass(frozen=True)
class NcuRecord:
    ok: bool = False  # a summary was measured
    seconds: float = 0.0  # wall time the profiling took
    config: str | None = None  # the configuration profiled (a slow candidate is profiled on a smaller one)
    reason: str = ""  # why there is no summary: no ncu, counters refused, over budget, no kernel seen
    metrics_refused: list[str] = field(default_factory=list)  # metrics this chip or driver would not collect
    summary: NcuSummary | None = None
    static_vs_ncu: list[KernelAgreement] = field(default_factory=list)  # per kernel: the estimate beside ncu

    def to_json(self) -> dict:
        data = asdict(self)
        data["static_vs_ncu"] = [row.to_json() for row in self.static_vs_ncu]  # with whether each pair agrees
        return data

    @classmethod
    def from_json(cls, data: dict) -> NcuRecord:
        return read_record(cls, data)


def ncu_record(profile: NcuProfile, config: str | None, static: StaticReport | None = None) -> NcuRecord:
    """The record of one profile: its summary and, given the static report at the profiled
    configuration, the estimate beside the measurement per kernel; else why there is no summary."""
    summary = profile.summary() if profile.ok else None
    common = {"seconds": round(profile.seconds, 2), "config": config, "metrics_refused": list(profile.missing_metrics)}
    if summary is None:
        return NcuRecord(ok=False, reason=profile.reason or "ncu saw none of the candidate's kernels", **common)
    compared = compare_kernels(static, summary.per_kernel, static.arch) if static is not None else []
    return NcuRecord(ok=True, summary=summary, static_vs_ncu=compared, **common)
