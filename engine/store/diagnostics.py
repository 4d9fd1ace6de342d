"""What a run stored, read back as the engine's own records: the dashboard's way to diagnostics.

`db` hands out rows with their JSON as it was stored and knows nothing of what it means; the
records that wrote it live here in the engine (`StaticReport`, `RooflineRecord`, `NcuRecord`,
`EnergyRecord`, `FeedbackRecord`, `ConfigResult`), so this is where a row's JSON becomes a record
again, tolerant of rows stored by older code. A page reads fields of records, never keys.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from db import queries
from engine.analysis import NcuRecord, RooflineRecord, StaticReport
from engine.feedback.model import FeedbackRecord
from engine.schema.evaluation import stored_configs
from engine.schema.verdict import ConfigResult
from engine.verify.judge.energy_meter import EnergyRecord


@dataclass(frozen=True)
class CandidateDiagnostics:
    """The newest diagnostic of each kind stored for one candidate; None where none was stored."""

    static: StaticReport | None = None
    roofline: RooflineRecord | None = None
    ncu: NcuRecord | None = None
    energy: EnergyRecord | None = None
    feedback: FeedbackRecord | None = None
    feedback_text: str = ""  # what the next round was told
    bottlenecks: dict[str, str] = field(default_factory=dict)  # kind -> the row's bottleneck column, where set


_RECORDS = {"static": StaticReport, "roofline": RooflineRecord, "ncu": NcuRecord, "energy": EnergyRecord,
            "feedback": FeedbackRecord}


def candidate_diagnostics(detail: queries.CandidateDetail) -> CandidateDiagnostics:
    """The candidate's stored diagnostics as records (`detail` from `db.queries.candidate_detail`)."""
    records: dict[str, object] = {}
    bottlenecks: dict[str, str] = {}
    for kind, record in _RECORDS.items():
        row = detail.diagnostic(kind)
        if row is None:
            continue
        records[kind] = record.from_json(row.data)
        if row.bottleneck:
            bottlenecks[kind] = row.bottleneck
    feedback = detail.diagnostic("feedback")
    return CandidateDiagnostics(**records, feedback_text=(feedback.text or "") if feedback else "",
                                bottlenecks=bottlenecks)


@dataclass(frozen=True)
class RooflineEntry:
    """One candidate's stored roofline diagnostic, with what a chart colours and orders it by."""

    candidate_id: int
    step: int | None
    verdict: str | None
    record: RooflineRecord


def roofline_entries(rows: list[queries.RooflineRow]) -> list[RooflineEntry]:
    return [RooflineEntry(r.candidate_id, r.step, r.verdict, RooflineRecord.from_json(r.data)) for r in rows]


def run_roofline(run_id: int, url: str | None = None) -> list[RooflineEntry]:
    """The newest roofline diagnostic of each candidate of a run."""
    return roofline_entries(queries.run_roofline(run_id, url=url))


@dataclass(frozen=True)
class TimingEntry:
    """A correct candidate's per-configuration results: for a roofline from the problem's model."""

    candidate_id: int
    step: int | None
    verdict: str | None
    configs: list[ConfigResult]


def timing_entries(rows: list[queries.TimingRow]) -> list[TimingEntry]:
    return [TimingEntry(r.candidate_id, r.step, r.verdict, configs_of(r.configs)) for r in rows]


def run_timings(run_id: int, url: str | None = None) -> list[TimingEntry]:
    """Per-configuration results of each correct candidate of a run (its latest evaluation)."""
    return timing_entries(queries.run_timings(run_id, url=url))


def configs_of(stored: list[dict] | None) -> list[ConfigResult]:
    """An evaluation's stored per-configuration results as records (`engine.schema.policy` reads them)."""
    return stored_configs(stored)
