"""benchmarks/library_timing_agreement.py: honest library timings measured now, against the shipped H200
recording, with the 5 % agreement counted per candidate, per baseline and per speedup (CPU only)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from db.models import Evaluation
from engine.schema.verdict import EvaluationResult, Verdict
from engine.store.evaluation import result_from_row
from engine.store.recorded import RECORDED_DIR
from tests.benchmark_scripts import load_benchmark

RECORDING = RECORDED_DIR / "h200-library-check.jsonl"


def _script():
    return load_benchmark("library_timing_agreement")


def _recorded(count: int) -> list[tuple[str, dict, EvaluationResult]]:
    """The first `count` candidates of the shipped recording: (problem slug, candidate, evaluation result)."""
    found = []
    for text in RECORDING.read_text().splitlines():
        record = json.loads(text)
        for candidate in record["candidates"]:
            row = Evaluation.model_validate({**candidate["evaluations"][-1], "candidate_id": 0})
            found.append((record["run"]["problem_slug"], candidate, result_from_row(row)))
            if len(found) == count:
                return found
    raise AssertionError(f"the recording holds fewer than {count} candidates")


def _scaled(result: EvaluationResult, factor: float) -> EvaluationResult:
    """`result` with the candidate's times on the timed configuration multiplied by `factor` (baselines kept)."""
    configs = []
    for config in result.configs:
        if config.candidate is not None and config.name == result.timed_config:
            stats = config.candidate
            config = replace(config, candidate=replace(stats, median_us=stats.median_us * factor,
                                                       mean_us=stats.mean_us * factor, min_us=stats.min_us * factor))
        configs.append(config)
    return replace(result, configs=configs, candidate_us=result.candidate_us * factor,
                   speedup=result.speedup / factor)


def _line(slug: str, candidate: dict, result: EvaluationResult) -> str:
    """One line as tests/test_verify_gpu.py::_record writes it."""
    return json.dumps({"problem": slug, "implementation": candidate["proposal"]["implementation"],
                       "strategy": candidate["strategy"], "language": candidate["language"],
                       "result": result.to_json()})


def _now_file(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def _report(tmp_path: Path, now_lines: list[str], before: Path = RECORDING) -> dict:
    """The script's JSON report on `now_lines` against `before` (it must exit 0)."""
    now, out = _now_file(tmp_path / "now.jsonl", now_lines), tmp_path / "report.json"
    assert _script().main([str(now), "--before", str(before), "--json", str(out)]) == 0
    return json.loads(out.read_text())


def _name(slug: str, candidate: dict) -> dict:
    return {"problem": slug, "implementation": candidate["proposal"]["implementation"]}


def test_a_two_percent_drift_agrees_a_twenty_percent_one_does_not_and_a_dropped_candidate_is_missing(tmp_path,
                                                                                                     capsys):
    (slug_a, cand_a, res_a), (slug_b, cand_b, res_b), (slug_c, cand_c, _) = _recorded(3)
    assert res_a.verdict == res_b.verdict == Verdict.CORRECT
    report = _report(tmp_path, [_line(slug_a, cand_a, _scaled(res_a, 1.02)),
                                _line(slug_b, cand_b, _scaled(res_b, 1.20))])

    summary = report["candidates"]["summary"]
    assert (summary["matched"], summary["within"], summary["outside"]) == (2, 1, 1)
    ratios = {(r["problem"], r["implementation"]): r["ratio"] for r in report["candidates"]["rows"]}
    key_a, key_b = tuple(_name(slug_a, cand_a).values()), tuple(_name(slug_b, cand_b).values())
    assert ratios[key_a] == pytest.approx(1.02) and ratios[key_b] == pytest.approx(1.20)
    assert [(w["problem"], w["implementation"]) for w in summary["worst"]] == [key_b, key_a]
    assert summary["geomean_ratio"] == pytest.approx((1.02 * 1.20) ** 0.5)
    assert summary["median_abs_deviation"] == pytest.approx((0.02 + 0.20) / 2)

    # The baselines were not touched: they agree exactly, and the speedups carry the candidates' drift.
    (baseline,) = [part["summary"] for part in report["baselines"].values()]
    assert (baseline["matched"], baseline["within"]) == (2, 2) and baseline["geomean_ratio"] == pytest.approx(1.0)
    speedups = report["speedups"]["summary"]
    assert (speedups["matched"], speedups["within"], speedups["outside"]) == (2, 1, 1)
    assert sorted(r["ratio"] for r in report["speedups"]["rows"]) == pytest.approx([1 / 1.20, 1 / 1.02])

    total = sum(len(json.loads(t)["candidates"]) for t in RECORDING.read_text().splitlines())
    assert _name(slug_c, cand_c) in report["missing_now"] and len(report["missing_now"]) == total - 2
    assert report["missing_before"] == [] and report["verdict_changed"] == [] and report["not_comparable"] == []
    assert "candidates: 2 matched, 1 within ±5%, 1 outside" in capsys.readouterr().out


def test_a_changed_verdict_and_an_unknown_candidate_are_named_not_timed(tmp_path):
    (slug_a, cand_a, res_a), (slug_b, cand_b, res_b) = _recorded(2)
    broken = replace(res_a, verdict=Verdict.INCORRECT, message="output 0 differs")
    stranger = {**cand_b, "proposal": {**cand_b["proposal"], "implementation": "not-in-the-library"}}
    now = _now_file(tmp_path / "now.jsonl", [_line(slug_a, cand_a, broken), _line(slug_b, cand_b, res_b),
                                             _line(slug_b, stranger, res_b)])
    out = tmp_path / "report.json"
    assert _script().main([str(now), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["verdict_changed"] == [{**_name(slug_a, cand_a), "before": "correct", "now": "incorrect"}]
    assert report["missing_before"] == [_name(slug_b, stranger)]
    summary = report["candidates"]["summary"]
    assert (summary["matched"], summary["within"]) == (1, 1) and summary["geomean_ratio"] == pytest.approx(1.0)


def test_an_unreadable_input_exits_2(tmp_path):
    not_results = _now_file(tmp_path / "now.jsonl", [json.dumps({"problem": "relu"})])
    assert _script().main([str(not_results)]) == 2
    assert _script().main([str(tmp_path / "absent.jsonl")]) == 2
    (slug, candidate, result) = _recorded(1)[0]
    now = _now_file(tmp_path / "ok.jsonl", [_line(slug, candidate, result)])
    assert _script().main([str(now), "--before", str(not_results)]) == 2


def test_another_library_checks_lines_are_a_baseline_too(tmp_path):
    """An earlier commit's check run on the same card is read as `--before` in its own format."""
    (slug_a, cand_a, res_a), (slug_b, cand_b, res_b) = _recorded(2)
    before = _now_file(tmp_path / "before.jsonl", [_line(slug_a, cand_a, res_a), _line(slug_b, cand_b, res_b)])
    report = _report(tmp_path, [_line(slug_a, cand_a, _scaled(res_a, 1.03)),
                                _line(slug_b, cand_b, _scaled(res_b, 0.90))], before)
    summary = report["candidates"]["summary"]
    assert (summary["matched"], summary["within"], summary["outside"]) == (2, 1, 1)
    assert sorted(r["ratio"] for r in report["candidates"]["rows"]) == pytest.approx([0.90, 1.03])
    assert report["missing_now"] == [] and report["missing_before"] == []
