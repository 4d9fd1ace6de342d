"""Flags in the dashboard: the Flags page lists open flags with their evidence and review buttons, a review
shows at once (on the Flags page and on the round's panel), and Best per problem counts only what a person
has not rejected, per problem and device."""

from __future__ import annotations

import math
import sys
import types

import pytest
from sqlmodel import select

from app.testing import add_round, app_at, make_run, other_code
from db.models import Evaluation
from db.session import session_scope

FLAGS, RUNS, LIVE = "views/flags.py", "views/runs.py", "views/run_live.py"
REASON = "speedup 40.0× is over 10×: re-measured in a fresh runner"


@pytest.fixture
def fake_engine(refinery_home, monkeypatch):
    fake = types.ModuleType("engine.runs.run")
    fake.gpu_available = lambda: False
    fake.run_folder = lambda run_id: refinery_home / "runs" / str(run_id)
    fake.send_control = lambda run_id, action, payload=None: None
    monkeypatch.setitem(sys.modules, "engine.runs.run", fake)


def _flag(candidate_id: int) -> int:
    with session_scope() as session:
        ev = session.exec(select(Evaluation).where(Evaluation.candidate_id == candidate_id)).one()
        ev.flagged, ev.timing = True, {"flag_reason": REASON}
        session.add(ev)
        return ev.id


def _flag_scored_with_speed(candidate_id: int) -> tuple[int, float, float]:
    """Flag a result whose stored reward still includes its speed term, as a row scored before flags held
    it does (the shipped recordings' flagged results); returns (evaluation, reward without, reward with)."""
    from engine.reward.score import RewardWeights, unified_reward

    scored = unified_reward("correct", 40.0, {}, None, None, RewardWeights())
    held = unified_reward("correct", 40.0, {}, None, None, RewardWeights(), flagged=True)
    with session_scope() as session:
        ev = session.exec(select(Evaluation).where(Evaluation.candidate_id == candidate_id)).one()
        ev.flagged, ev.timing = True, {"flag_reason": REASON}
        ev.reward, ev.reward_components = scored.total, scored.to_json()
        session.add(ev)
        return ev.id, held.total, scored.total


def _reward_metric(at) -> str:
    return next(m.value for m in at.metric if m.label == "Reward")


def _review(at, evaluation_id: int, button: str):
    at.text_input(key=f"flag_reviewer_{evaluation_id}").set_value("ada")
    next(b for b in at.button if b.label.startswith(button)).click()
    return at.run()


def test_the_flags_page_lists_open_flags_with_their_evidence_and_review_buttons(refinery_home):
    run_id = make_run()
    evaluation = _flag(add_round(run_id, 0, speedup=40.0))
    at = app_at(FLAGS)
    assert not at.exception
    assert any(REASON in w.value for w in at.warning)
    assert {b.label for b in at.button} >= {"Clear: the speedup is real", "Reject: not real"}
    assert any(m.label == "Speedup claimed" and m.value == "40.00×" for m in at.metric)
    _review(at, evaluation, "Clear")
    assert any("No open flags" in s.value for s in at.success)


def test_clearing_a_flag_on_the_rounds_panel_shows_at_once(fake_engine):
    run_id = make_run()
    evaluation = _flag(add_round(run_id, 0, speedup=40.0))
    at = app_at(LIVE, query={"run": str(run_id)})
    assert any("Flagged for review" in w.value for w in at.warning)
    _review(at, evaluation, "Clear")
    assert not at.exception
    assert any("Flag cleared by ada" in s.value for s in at.success)
    assert not any(b.label.startswith("Clear:") for b in at.button)


def test_best_per_problem_leaves_out_a_rejected_result_and_counts_one_awaiting_review(refinery_home):
    from engine.reward.review import review_flag

    run_id = make_run()
    honest = add_round(run_id, 0, speedup=2.0, source=other_code(1))
    rejected = _flag(add_round(run_id, 1, speedup=40.0, source=other_code(2)))
    _flag(add_round(run_id, 2, speedup=30.0, source=other_code(3)))
    review_flag(rejected, "rejected", "ada", "the timer was fooled")
    at = app_at(RUNS)
    table = at.dataframe(key="best_table").value
    assert list(table["candidate"]) == [honest] and list(table["device"]) == ["NVIDIA H200"]
    assert list(table["best speedup"]) == ["2.00×"] and list(table["awaiting review"]) == [1]


@pytest.mark.parametrize("decision", ["Clear", "Reject"])
def test_the_reward_shown_is_the_one_the_flag_banner_describes_in_every_state(fake_engine, decision):
    run_id = make_run()
    evaluation, without, with_speed = _flag_scored_with_speed(add_round(run_id, 0, speedup=40.0))
    at = app_at(LIVE, query={"run": str(run_id)})
    (banner,) = [w.value for w in at.warning if "Flagged for review" in w.value]
    assert _reward_metric(at) == f"{without:.3f}" and f"reward {without:.3f} without it" in banner
    _review(at, evaluation, decision)
    if decision == "Clear":
        (banner,) = [s.value for s in at.success if "Flag cleared" in s.value]
        assert _reward_metric(at) == f"{with_speed:.3f}" and f"reward {with_speed:.3f}" in banner
    else:
        (banner,) = [e.value for e in at.error if "Flag upheld" in e.value]
        assert _reward_metric(at) == "-1.000" and "reward -1.000" in banner


def test_the_flags_page_shows_the_reward_without_the_held_speed_term(refinery_home):
    run_id = make_run()
    _, without, _ = _flag_scored_with_speed(add_round(run_id, 0, speedup=40.0))
    at = app_at(FLAGS)
    assert next(m.value for m in at.metric if m.label == "Reward that counts now") == f"{without:.3f}"
    assert next(m.value for m in at.metric if m.label == "Speed term held") == f"{math.log(40.0):.3f}"
