"""A flagged result (an implausible speedup) earns no speed reward and enters no dataset, ranker or label
queue until a person clears it; the flag, the decision, who made it and why are stored."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from db.evaluations import get_flag, list_flags
from db.labels import load_evidence
from db.models import Candidate, Evaluation, Run
from db.session import session_scope
from engine.reward.review import review_flag
from engine.reward.score import RewardWeights, unified_reward

FEATURES = {"occupancy": 0.5, "spill_bytes": 0.0, "coalescing_sectors_per_request": 4.0, "vector_width": 16.0}


def test_a_flagged_result_earns_no_speed_reward_and_holds_it_aside():
    honest = unified_reward("correct", 20.0, FEATURES, 0.9, None, RewardWeights())
    flagged = unified_reward("correct", 20.0, FEATURES, 0.9, None, RewardWeights(), flagged=True)
    assert flagged.speed is None and flagged.speed_held == pytest.approx(math.log(20.0))
    assert flagged.total == pytest.approx(honest.total - math.log(20.0))
    assert flagged.tiered == 0.0 < honest.tiered


def _store(session, run, speedup: float, flagged: bool) -> int:
    candidate = Candidate(run_id=run.id, problem_slug="relu", origin="library", language="python",
                          source=f"# {speedup}\nclass ModelNew: pass\n", source_hash=f"h{speedup}")
    session.add(candidate)
    session.flush()
    reward = unified_reward("correct", speedup, FEATURES, 0.9, None, RewardWeights(), flagged=flagged)
    evaluation = Evaluation(candidate_id=candidate.id, verdict="correct", speedup=speedup, candidate_us=100 / speedup,
                            baseline_us=100.0, device="NVIDIA H200", reward=reward.total,
                            reward_components=reward.to_json(), flagged=flagged,
                            timing={"flag_reason": "speedup 40.0× is over 10×: re-measured"} if flagged else {})
    session.add(evaluation)
    session.flush()
    return evaluation.id


@pytest.fixture
def stored(refinery_home):
    with session_scope() as session:
        run = Run(problem_slug="relu", proposer="library", strategy="iterative", rounds_budget=3, device="NVIDIA H200")
        session.add(run)
        session.flush()
        honest = _store(session, run, 1.5, flagged=False)
        suspicious = _store(session, run, 40.0, flagged=True)
    return {"honest": honest, "suspicious": suspicious}


def _candidate_of(evaluation_id: int) -> int:
    with session_scope() as session:
        return session.get(Evaluation, evaluation_id).candidate_id


def test_a_flagged_result_waits_for_review_and_stays_out_of_the_evidence(stored):
    assert [f.evaluation_id for f in list_flags()] == [stored["suspicious"]]
    assert "re-measured" in list_flags()[0].reason
    ids = {e.id for e in load_evidence()}
    assert _candidate_of(stored["honest"]) in ids and _candidate_of(stored["suspicious"]) not in ids
    assert _candidate_of(stored["suspicious"]) in {e.id for e in load_evidence(include_held=True)}


def test_clearing_pays_the_held_speed_and_admits_the_result(stored):
    before = get_flag(stored["suspicious"])
    row = review_flag(stored["suspicious"], "cleared", "ada", "re-ran it by hand: real")
    assert row.review == "cleared" and row.reviewer == "ada" and row.note == "re-ran it by hand: real"
    assert row.reward == pytest.approx(before.reward + math.log(40.0))
    assert row.components["speed"] == pytest.approx(math.log(40.0)) and row.components["speed_held"] is None
    assert list_flags() == [] and [f.review for f in list_flags(awaiting_only=False)] == ["cleared"]
    assert _candidate_of(stored["suspicious"]) in {e.id for e in load_evidence()}
    with pytest.raises(ValueError, match="already cleared by ada"):
        review_flag(stored["suspicious"], "rejected", "bob")


def test_rejecting_scores_it_as_a_cheat_and_keeps_it_out(stored):
    row = review_flag(stored["suspicious"], "rejected", "bob", "stream escape seen in the profile")
    assert row.reward == -1.0 and row.components["correct"] is False
    assert _candidate_of(stored["suspicious"]) not in {e.id for e in load_evidence()}


def test_a_review_needs_a_reviewer_and_a_known_decision(stored):
    with pytest.raises(ValueError, match="reviewer"):
        review_flag(stored["suspicious"], "cleared", "  ")
    with pytest.raises(ValueError, match="one of"):
        review_flag(stored["suspicious"], "maybe", "ada")
    with pytest.raises(ValueError, match="not flagged"):
        review_flag(stored["honest"], "cleared", "ada")


def test_exports_leave_out_a_flagged_result_until_it_is_cleared(stored, tmp_path):
    pytest.importorskip("datasets")
    import json

    from engine.export import export_dataset

    def exported(name: str) -> set[float]:
        export_dataset("candidates", "jsonl", tmp_path / name)
        lines = [json.loads(line) for path in (tmp_path / name).rglob("*.jsonl") for line in path.open()]
        return {row["speedup"] for row in lines}

    assert exported("before") == {1.5}
    review_flag(stored["suspicious"], "cleared", "ada")
    assert exported("after") == {1.5, 40.0}


def test_the_cli_lists_and_clears_flags(stored):
    from engine.cli import app

    listed = CliRunner().invoke(app, ["flags", "list"])
    assert listed.exit_code == 0 and str(stored["suspicious"]) in listed.output and "waiting" in listed.output
    cleared = CliRunner().invoke(app, ["flags", "clear", str(stored["suspicious"]), "--reviewer", "ada"])
    assert cleared.exit_code == 0 and "cleared by ada" in cleared.output
    again = CliRunner().invoke(app, ["flags", "clear", str(stored["suspicious"]), "--reviewer", "ada"])
    assert again.exit_code == 1 and "already" in again.output


def test_a_flagged_row_scored_before_flags_held_speed_counts_without_it_until_cleared():
    from engine.reward.score import clear_held_speed, counted_reward

    old = unified_reward("correct", 20.0, FEATURES, 0.9, None, RewardWeights())  # speed in its total
    held = unified_reward("correct", 20.0, FEATURES, 0.9, None, RewardWeights(), flagged=True)
    total, components = counted_reward(old.total, old.to_json(), True, None)
    assert total == pytest.approx(held.total) and components["speed_held"] == pytest.approx(math.log(20.0))
    assert counted_reward(total, components, True, None) == (total, components)  # held once, not twice
    assert counted_reward(held.total, held.to_json(), True, None)[0] == pytest.approx(held.total)
    assert clear_held_speed(components, total, 20.0)[0] == pytest.approx(old.total)
    assert counted_reward(old.total, old.to_json(), True, "cleared")[0] == old.total
    assert counted_reward(-1.0, {"total": -1.0}, True, "rejected")[0] == -1.0
