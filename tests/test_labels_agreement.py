"""Agreement maths: Cohen's kappa, side-independent votes, per-labeler and overall, with measurement."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from db.labels import CandidateEvidence, LabelRow
from engine.rank.agreement import agreement_from, canonical, cohen_kappa, compute_agreement
from tests.rank_support import measured

NOW = datetime(2026, 1, 1, tzinfo=UTC)
_ids = iter(range(1, 10_000))


def vote(a: int, b: int, labeler: int, choice: str, undone: bool = False) -> LabelRow:
    return LabelRow(id=next(_ids), candidate_a_id=a, candidate_b_id=b, labeler_id=labeler, session_id=None,
                    choice=choice, tags=(), note="", blind=False, undone=undone, created_at=NOW)


def cand(cid: int, us: float) -> CandidateEvidence:
    return CandidateEvidence(id=cid, problem_slug="p", language="cuda", origin="library", strategy=None, source="",
                             source_hash=str(cid), created_at=NOW, measurements=(measured("H200", us),))


def test_cohens_kappa_matches_the_textbook_example():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = 0.7, p_e = 0.5, kappa = 0.4
    first = ["y"] * 25 + ["n"] * 25
    second = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)


def test_kappa_is_one_for_perfect_agreement_and_none_without_items():
    assert cohen_kappa(["a", "b", "a"], ["a", "b", "a"]) == 1.0
    assert cohen_kappa(["a"], ["a"]) == 1.0
    assert cohen_kappa([], []) is None


def test_kappa_is_negative_when_raters_systematically_disagree():
    assert cohen_kappa(["a", "b"] * 5, ["b", "a"] * 5) == pytest.approx(-1.0)


def test_a_vote_means_the_same_whichever_side_the_candidates_were_shown_on():
    assert canonical(vote(1, 2, 1, "a")) == canonical(vote(2, 1, 1, "b")) == ((1, 2), "lo")
    assert canonical(vote(2, 1, 1, "tie")) == ((1, 2), "tie")
    assert canonical(vote(1, 2, 1, "skip")) is None


def test_two_labelers_agreeing_on_every_overlapping_pair_have_kappa_one():
    labels = [vote(1, 2, 1, "a"), vote(2, 1, 2, "b"), vote(3, 4, 1, "b"), vote(4, 3, 2, "a"), vote(5, 6, 1, "a")]
    report = compute_agreement(labels, {1: "ann", 2: "bob"}, {})
    assert report.overall_kappa == 1.0 and report.overlap_pairs == 2 and report.raw_agreement == 1.0
    ann = next(r for r in report.labelers if r.name == "ann")
    assert ann.votes == 3 and ann.overlap_pairs == 2 and ann.kappa == 1.0


def test_a_kappa_from_fewer_than_twenty_overlapping_pairs_carries_a_caveat_and_one_from_twenty_none():
    labels = [vote(1, 2, 1, "a"), vote(2, 1, 2, "b"), vote(3, 4, 1, "b"), vote(4, 3, 2, "a")]
    assert "only 2 overlapping pair(s)" in compute_agreement(labels, {1: "ann", 2: "bob"}, {}).kappa_caveat
    many = [vote(k, k + 1, labeler, "a") for k in range(0, 40, 2) for labeler in (1, 2)]
    assert compute_agreement(many, {1: "ann", 2: "bob"}, {}).kappa_caveat is None


def test_only_the_newest_live_vote_of_a_labeler_on_a_pair_counts():
    labels = [vote(1, 2, 1, "b"), vote(1, 2, 1, "a"), vote(1, 2, 2, "a"), vote(1, 2, 2, "b", undone=True)]
    assert compute_agreement(labels, {}, {}).raw_agreement == 1.0


def test_per_labeler_kappa_pools_the_labeler_against_everyone_else():
    labels = [vote(1, 2, 1, "a"), vote(1, 2, 2, "a"), vote(1, 2, 3, "b"),
              vote(3, 4, 1, "b"), vote(3, 4, 2, "b"), vote(3, 4, 3, "a")]
    report = compute_agreement(labels, {1: "a", 2: "b", 3: "c"}, {})
    kappas = {r.name: r.kappa for r in report.labelers}
    assert kappas["a"] == kappas["b"] > kappas["c"]
    assert report.rating_pairs == 6


def test_agreement_with_measurement_counts_votes_naming_the_faster_candidate():
    evidence = {1: cand(1, 50.0), 2: cand(2, 100.0), 3: cand(3, 100.0), 4: cand(4, 104.0)}
    labels = [vote(1, 2, 1, "a"), vote(2, 1, 2, "a"), vote(2, 1, 3, "tie"), vote(3, 4, 1, "a")]
    report = agreement_from(labels, evidence, {1: "ann", 2: "bob", 3: "cy"})
    rows = {r.name: r for r in report.labelers}
    assert rows["ann"].measured_agreement == 1.0 and rows["ann"].measured_votes == 1  # 3 vs 4 is within 10 %
    assert rows["bob"].measured_agreement == 0.0 and rows["cy"].measured_agreement == 0.0
    assert report.measured_votes == 3 and report.measured_agreement == pytest.approx(1 / 3)


def test_labeler_weights_reward_agreement_and_start_newcomers_in_between():
    evidence = {i: cand(i, 10.0 * i) for i in range(1, 21)}
    good = [vote(i, i + 1, 1, "a") for i in range(1, 20, 2)]  # always names the faster (lower id)
    bad = [vote(i, i + 1, 2, "b") for i in range(2, 20, 2)]  # always names the slower
    report = agreement_from(good + bad, evidence, {1: "good", 2: "bad", 3: "new"})
    weights = {r.name: r.weight for r in report.labelers}
    assert weights["new"] == pytest.approx(0.5)
    assert weights["good"] > weights["new"] > weights["bad"] > 0


def test_the_share_of_votes_for_the_left_side_exposes_position_bias():
    labels = [vote(1, 2, 1, "a"), vote(3, 4, 1, "a"), vote(5, 6, 1, "a"), vote(7, 8, 1, "b"), vote(1, 3, 1, "tie")]
    assert compute_agreement(labels, {}, {}).left_share == 0.75
