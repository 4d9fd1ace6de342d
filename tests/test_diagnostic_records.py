"""The stored diagnostics as typed records: each one round-trips through its JSON, rows stored by
older code read with defaults for what they lack, keys of newer code are ignored, a wrong value is a
validation error naming its field, and what a round stores reads back as the records that wrote it."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from db.queries import CandidateDetail, DiagnosticView
from engine.analysis.profile.devices import match_device
from engine.analysis.profile.ncu import NcuKernel, NcuProfile
from engine.analysis.profile.ncu_record import NcuRecord, ncu_record
from engine.analysis.profile.roofline import Bottleneck, Classification, RooflineRecord, roofline_point
from engine.analysis.record import StaticReport
from engine.feedback.model import FeedbackRecord, Finding
from engine.reward.score import unified_reward
from engine.schema.verdict import EvaluationResult, Verdict
from engine.store.diagnostics import candidate_diagnostics, configs_of
from engine.store.outcome import RoundOutcome
from engine.verify.judge.energy_meter import EnergyComparison, EnergyMeasurement, EnergyRecord

RECORDED = Path(__file__).resolve().parents[1] / "assets" / "recorded"


def _recorded_rows(kind: str) -> list[dict]:
    rows = []
    for path in sorted(RECORDED.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            for candidate in json.loads(line)["candidates"]:
                rows += [d["data"] for d in candidate["diagnostics"] if d["kind"] == kind]
    return rows


def _through_json(record):
    return type(record).from_json(json.loads(json.dumps(record.to_json())))


@pytest.fixture(scope="module")
def static() -> StaticReport:
    return StaticReport.from_json(_recorded_rows("static")[0])


def _measured(joules: float) -> EnergyMeasurement:
    return EnergyMeasurement(joules_per_call=joules, seconds_per_call=1e-3, calls=500, seconds=0.5, joules=500 * joules,
                             average_watts=joules * 1e3, idle_watts=80.0)


def _ncu(static: StaticReport) -> NcuRecord:
    kernel = static.kernels[0]
    metrics = {"gpu__time_duration.sum": 2e-5, "dram__bytes_read.sum": 4e6, "dram__bytes_write.sum": 2e6,
               "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 4096.0,
               "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 1024.0,
               "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio": 12.5}
    profile = NcuProfile(True, "", [NcuKernel(f"{kernel.name}(float *)", metrics)], 3.21, [], ["sm__x.sum"])
    return ncu_record(profile, static.config, static)


def _records(static: StaticReport) -> list:
    point = roofline_point(1e6, 6e6, 2e-5, match_device("NVIDIA H200"), "fp32", "ncu")
    return [
        static,
        RooflineRecord(point, Classification(Bottleneck.LATENCY, "18% of the memory roof"), "NVIDIA H200",
                       ["a note"], "large"),
        _ncu(static),
        EnergyRecord("NVIDIA H200", 0.5, _measured(0.02), "the candidate's process", "eager", _measured(0.05),
                     EnergyComparison(0.02, 0.05, 0.4, 0.03, 0.6)),
        FeedbackRecord(["coalescing"], [Finding("coalescing", "memory/uncoalesced-access", "uncoalesced stores",
                                                "32 sectors per request", "stage a tile", 0.8, 32.0, "k", 12)]),
    ]


def test_every_record_comes_back_from_its_json_unchanged(static) -> None:
    for record in _records(static):
        assert _through_json(record) == record, type(record).__name__


def test_a_profiled_record_keeps_the_estimate_beside_the_measurement(static) -> None:
    record = _ncu(static)
    (row,) = record.static_vs_ncu
    assert record.ok and record.metrics_refused == ["sm__x.sum"] and record.seconds == 3.21
    assert row.kernel == static.kernels[0].name and row.ncu_ld == 4.0
    assert record.to_json()["static_vs_ncu"][0]["ld_agree"] == row.ld_agree  # stored for other readers too
    assert record.summary.top_stalls == [("long_scoreboard", 12.5)]


def test_every_shipped_recording_reads_as_records() -> None:
    statics, rooflines, feedback = (_recorded_rows(kind) for kind in ("static", "roofline", "feedback"))
    assert statics and rooflines and feedback
    for data in statics:
        report = StaticReport.from_json(data)
        assert report.features == data["features"] and len(report.kernels) == len(data["kernels"])
        assert all(isinstance(k.launch.block, tuple) for k in report.kernels)
        assert _through_json(report) == report
    for data in rooflines:
        record = RooflineRecord.from_json(data)
        assert record.point.pct_of_roof == data["point"]["pct_of_roof"]
        assert str(record.bottleneck) == data["classification"]["bottleneck"]
    assert all(FeedbackRecord.from_json(d).details[0].tool == d["findings"][0] for d in feedback if d["findings"])


def test_fields_a_row_was_stored_without_take_their_defaults(static) -> None:
    roofline = RooflineRecord.from_json({"point": None, "notes": ["no timing"]})  # before `config`, no class
    assert (roofline.config, roofline.classification, roofline.bottleneck) == (None, None, None)
    summary = dataclasses.asdict(_ncu(static).summary)
    ncu = NcuRecord.from_json({"ok": True, "seconds": 6.1, "config": "large", "summary": summary})  # before the
    assert ncu.metrics_refused == [] and ncu.static_vs_ncu == []  # refused metrics and the comparison were kept
    energy = EnergyRecord.from_json({"reason": "energy not measured: NVML did not start"})
    assert energy.candidate is None and energy.reason.startswith("energy not measured")
    older = copy.deepcopy(_recorded_rows("static")[0])
    for kernel in older["kernels"]:
        kernel.pop("branches", None), kernel.pop("loops", None)  # before warp divergence and loops were kept
        for access in kernel["accesses"]:
            access.pop("struct_name", None), access.pop("struct_bytes", None)
    kernel = StaticReport.from_json(older).kernels[0]
    assert (kernel.branches, kernel.loops) == ([], []) and all(a.struct_bytes == 0 for a in kernel.accesses)
    assert all(isinstance(width, int) for width in kernel.mix.global_load_widths)  # JSON's string keys: byte widths


def test_keys_a_record_does_not_hold_are_dropped(static) -> None:
    record = _ncu(static)
    (stored,) = record.to_json()["static_vs_ncu"]
    assert "ld_agree" in stored  # a property written for other readers, not a field
    (row,) = NcuRecord.from_json({"ok": True, "static_vs_ncu": [{**stored, "from_a_newer_engine": 1}]}).static_vs_ncu
    assert row == record.static_vs_ncu[0]


def test_a_newer_key_in_every_stored_record_is_ignored(static) -> None:
    for record in _records(static):
        newer = {**json.loads(json.dumps(record.to_json())), "written_by_a_newer_engine": {"x": 1}}
        assert type(record).from_json(newer) == record, type(record).__name__


def test_a_value_of_the_wrong_type_is_a_validation_error_naming_the_field(static) -> None:
    broken = {**static.to_json(), "launches_per_call": "many"}
    with pytest.raises(ValidationError, match="launches_per_call"):
        StaticReport.from_json(broken)
    with pytest.raises(ValidationError, match="classification.bottleneck"):
        RooflineRecord.from_json({"classification": {"bottleneck": "sideways-bound", "reason": "?"}})
    with pytest.raises(ValidationError, match="candidate.trials"):
        configs_of([{"name": "large", "hidden": False, "ok": True,
                     "candidate": {"median_us": 1.0, "iqr_us": 0.1, "mean_us": 1.0, "min_us": 1.0, "trials": "x"}}])


def test_a_rounds_stored_rows_read_back_as_the_records_that_wrote_them(static) -> None:
    roofline, ncu, energy, feedback = _records(static)[1:]
    result = EvaluationResult(Verdict.CORRECT, "correct", speedup=2.0, candidate_us=10.0, baseline_us=20.0)
    outcome = RoundOutcome(result, unified_reward("correct", 2.0), static=static, roofline=roofline, ncu=ncu,
                           energy=energy, feedback_text="1. stage a tile", findings=feedback.findings,
                           finding_details=feedback.details, bottleneck="latency-bound")
    views: dict[str, list[DiagnosticView]] = {}
    for row in outcome.diagnostic_rows():
        stored = json.loads(json.dumps(row.data))  # what the JSON column gives back
        views.setdefault(row.kind, []).append(DiagnosticView(row.kind, row.bottleneck, stored, row.text))
    detail = CandidateDetail(1, 1, "add-layernorm", 0, 0, None, 0, "library", None, "cuda", "", None, None, {}, None,
                             None, None, None, None, views)
    read = candidate_diagnostics(detail)
    assert (read.static, read.roofline, read.ncu, read.energy, read.feedback) == (static, roofline, ncu, energy,
                                                                                 feedback)
    assert read.feedback_text == "1. stage a tile" and read.bottlenecks == {"roofline": "latency-bound",
                                                                           "feedback": "latency-bound"}
