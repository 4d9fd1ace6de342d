"""The Label page: sign in, start a session, vote with the buttons (keyboard shortcuts), undo, agreement."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from db.labels import list_labels
from engine.rank.synthetic import SyntheticConfig, write_synthetic
from engine.settings import get_settings

PAGE = str(Path(__file__).resolve().parents[1] / "app" / "views" / "label.py")


@pytest.fixture
def candidates(refinery_home) -> list[int]:
    return write_synthetic(SyntheticConfig(problems=2, candidates_per_problem=5, seed=3))


def signed_in(name: str = "ada") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="label_name").input(name)
    at.button[0].click().run()
    return at


def started(queue: str = "random", blind: bool = False) -> AppTest:
    at = signed_in()
    at.selectbox(key="label_queue").set_value(queue)
    at.toggle(key="label_blind").set_value(blind)
    at.button(key="label_start").click().run()
    assert not at.exception, at.exception
    return at


def html(at: AppTest) -> str:
    return "\n".join(h.value for h in at.html)


def test_the_page_asks_for_a_name_first(refinery_home):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert at.text_input(key="label_name") is not None
    assert not [b for b in at.button if b.key == "label_vote_a"]


def test_a_wrong_team_password_keeps_the_labeler_out(refinery_home, monkeypatch):
    monkeypatch.setenv("REFINERY_TEAM_PASSWORD", "kernels")
    get_settings.cache_clear()
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.text_input(key="label_name").input("ada")
    at.text_input(key="label_password").input("nope")
    at.button[0].click().run()
    assert any("wrong team password" in e.value for e in at.error)
    assert "label_labeler" not in at.session_state


def test_a_started_session_shows_both_codes_side_by_side_with_their_evidence(candidates):
    at = started()
    assert "__global__" in html(at) and len(at.html) >= 3  # two code panes and the diff
    assert any("speedup" in m.value for m in at.markdown)
    assert at.button(key="label_vote_a").proto.shortcut.lower() == "a"


def test_blind_mode_hides_verdicts_speed_and_diagnostics(candidates):
    at = started(blind=True)
    assert "__global__" in html(at)
    assert not any("speedup" in m.value or "**static**" in m.value for m in at.markdown)


def test_a_vote_is_stored_with_its_tags_and_note_and_the_next_pair_appears(candidates):
    at = started()
    first = at.session_state["label_pair"]
    at.pills(key="label_tags").set_value(["coalescing"])
    at.text_input(key="label_note").input("float4 loads")
    at.button(key="label_vote_a").click().run()
    [label] = list_labels()
    assert (label.candidate_a_id, label.candidate_b_id) == first[:2]
    assert label.choice == "a" and label.tags == ("coalescing",) and label.note == "float4 loads"
    assert at.session_state["label_pair"] != first
    assert "1 labelled" in at.get("progress")[0].proto.text


def test_undo_takes_the_last_vote_back_and_shows_that_pair_again(candidates):
    at = started()
    first = at.session_state["label_pair"]
    at.button(key="label_vote_tie").click().run()
    at.button(key="label_undo").click().run()
    assert list_labels() == []
    assert at.session_state["label_pair"][:2] == first[:2]


def test_the_agreement_panel_is_on_the_page(candidates):
    at = started()
    assert any("κ" in m.label for m in at.metric)


def test_a_kappa_from_two_overlapping_pairs_names_them_and_says_they_are_too_few(candidates):
    from db.labels import add_label, get_or_create_labeler

    ann, bob = get_or_create_labeler("ann"), get_or_create_labeler("bob")
    for labeler in (ann, bob):
        for a, b in ((candidates[0], candidates[1]), (candidates[2], candidates[3])):
            add_label(labeler_id=labeler.id, session_id=None, candidate_a_id=a, candidate_b_id=b, choice="a")
    at = signed_in()
    [kappa] = [m for m in at.metric if "κ" in m.label]
    assert kappa.label == "Cohen's κ (overall, 2 pairs)" and kappa.value == "1.00"
    assert any("only 2 overlapping pair(s): too few" in c.value for c in at.caption)


def test_the_uncertain_queue_without_a_ranker_says_it_serves_random_pairs(candidates):
    at = signed_in()
    assert at.selectbox(key="label_queue").value == "uncertain"
    assert any("No ranker is trained yet" in w.value and "random pairs" in w.value for w in at.sidebar.warning)
    at.selectbox(key="label_queue").set_value("random")
    at.button(key="label_start").click().run()
    assert not at.sidebar.warning
    at.selectbox(key="label_queue").set_value("uncertain")
    at.button(key="label_start").click().run()
    at.session_state["label_pair"] = None
    at.run()
    assert any("no ranker trained yet" in c.value for c in at.caption)  # the pair says why it was chosen
