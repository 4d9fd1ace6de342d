"""The evaluation row's `timing` blob read as one record: shipped rows of older versions read (their
`baseline` key migrated, no torch version), keys of newer code are ignored, a wrong value is an error
naming its field, and what the store writes reads back as the result that wrote it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from db.models import Evaluation
from engine.schema.evaluation import EvaluationTiming, KernelLaunch, TimingStats
from engine.schema.verdict import ConfigResult, EvaluationResult, Verdict
from engine.store.evaluation import evaluation_row, result_from_row

RECORDED = Path(__file__).resolve().parents[1] / "assets" / "recorded"


def _shipped_evaluations() -> list[dict]:
    return [evaluation for path in sorted(RECORDED.glob("*.jsonl")) for line in path.read_text().splitlines()
            for candidate in json.loads(line)["candidates"] for evaluation in candidate["evaluations"]]


def test_an_older_rows_baseline_key_is_migrated_to_baseline_name() -> None:
    timing = EvaluationTiming.from_stored({"timed_config": "large", "baseline": "eager", "flag_reason": ""})
    assert timing.baseline_name == "eager" and timing.context == ("eager", "large")


def test_a_row_stored_without_a_torch_version_reads_with_none() -> None:
    assert EvaluationTiming.from_stored({"timed_config": "large"}).torch_version is None
    assert EvaluationTiming.from_stored(None) == EvaluationTiming()


def test_every_shipped_evaluation_reads_through_the_store() -> None:
    shipped = _shipped_evaluations()
    assert shipped
    for stored in shipped:
        result = result_from_row(Evaluation.model_validate({**stored, "candidate_id": 0}))
        assert result.baseline_name == stored["timing"]["baseline"]  # the older key, migrated
        assert result.timed_config == stored["timing"]["timed_config"] and result.torch_version is None
        assert [k.name for k in result.kernels] == [k["name"] for k in stored["timing"]["kernels"]]


def test_a_newer_key_in_the_timing_blob_is_ignored() -> None:
    stored = {"timed_config": "large", "baseline_name": "eager", "gpu_clock_mhz": 1980}
    assert EvaluationTiming.from_stored(stored) == EvaluationTiming(timed_config="large", baseline_name="eager")


def test_a_newer_key_in_a_stored_result_is_ignored() -> None:
    result = EvaluationResult(Verdict.CORRECT, "ok", speedup=2.0)
    assert EvaluationResult.from_json({**result.to_json(), "written_by_a_newer_engine": True}) == result


def test_a_wrong_value_in_the_timing_blob_is_an_error_naming_the_field() -> None:
    with pytest.raises(ValidationError, match="seeds"):
        EvaluationTiming.from_stored({"seeds": "every one"})
    with pytest.raises(ValidationError, match=r"kernels\.0\.calls"):
        EvaluationTiming.from_stored({"kernels": [{"name": "k", "calls": "many", "total_us": 1.0, "share": 1.0,
                                                   "own": True}]})


def test_what_the_store_writes_reads_back_as_the_result() -> None:
    stats = TimingStats(10.0, 0.1, 10.0, 9.9, 100, samples_us=[10.0, 9.9])
    result = EvaluationResult(Verdict.CORRECT, "ok", configs=[ConfigResult("large", False, True, candidate=stats,
                                                                          baselines={"eager": stats})],
                              kernels=[KernelLaunch("k", 2, 20.0, 1.0, True)], timed_config="large",
                              baseline_name="eager", speedup=1.0, seeds=[1, 2], torch_version="2.11.0",
                              stage_seconds={"load": 0.5})
    row = evaluation_row(result)
    row.timing = json.loads(json.dumps(row.timing))  # what the JSON column gives back
    row.configs = json.loads(json.dumps(row.configs))
    assert result_from_row(row) == result
    assert EvaluationTiming.from_stored(row.timing).candidate == stats  # the timed times, for readers of the row
