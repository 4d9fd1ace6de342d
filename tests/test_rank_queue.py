"""The labeling queue: each strategy's choice, overlap for agreement, and what is never offered."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import pytest

from db.labels import CandidateEvidence, LabelRow
from engine.rank.queue import NO_RANKER, QueueSnapshot, choose_pair, key
from tests.rank_support import measured

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def cand(cid: int, problem: str = "p", us: float | None = None, source_hash: str | None = None,
         age_min: int = 0) -> CandidateEvidence:
    return CandidateEvidence(id=cid, problem_slug=problem, language="cuda", origin="library", strategy=None,
                             source="", source_hash=source_hash or str(cid), created_at=T0 + timedelta(minutes=age_min),
                             measurements=(measured("H200", us),) if us else ())


def vote(lid: int, a: int, b: int, labeler: int, choice: str = "a", undone: bool = False) -> LabelRow:
    return LabelRow(id=lid, candidate_a_id=a, candidate_b_id=b, labeler_id=labeler, session_id=None, choice=choice,
                    tags=(), note="", blind=False, undone=undone, created_at=T0)


def pick(snapshot, strategy, labeler=1, overlap=0.0, seed=0, **kw):
    return choose_pair(snapshot, labeler, strategy, overlap_share=overlap, rng=random.Random(seed), **kw)


def test_both_candidates_of_a_pair_belong_to_the_same_problem():
    snapshot = QueueSnapshot([cand(1, "p"), cand(2, "q"), cand(3, "p"), cand(4, "q")], [])
    for seed in range(20):
        pair = pick(snapshot, "random", seed=seed)
        assert {pair.first, pair.second} in ({1, 3}, {2, 4})


def test_uncertain_offers_the_pair_whose_scores_are_closest():
    snapshot = QueueSnapshot([cand(i) for i in range(1, 5)], [], scores={1: 0.0, 2: 3.0, 3: 3.05, 4: 9.0})
    pair = pick(snapshot, "uncertain")
    assert key(pair.first, pair.second) == (2, 3) and pair.reason == "uncertain"


def test_disagreement_offers_the_measured_pair_the_ranker_orders_most_confidently_wrong():
    # 1 is measured 2x faster than 2 but scored far lower; 3 vs 4 is wrong only by a little
    candidates = [cand(1, us=50), cand(2, us=100), cand(3, us=50), cand(4, us=100)]
    snapshot = QueueSnapshot(candidates, [], scores={1: -5.0, 2: 5.0, 3: 0.0, 4: 0.1})
    pair = pick(snapshot, "disagreement")
    assert key(pair.first, pair.second) == (1, 2) and pair.reason == "disagreement"


def test_disagreement_ignores_pairs_within_the_timing_margin():
    snapshot = QueueSnapshot([cand(1, us=100), cand(2, us=105)], [], scores={1: -5.0, 2: 5.0})
    assert pick(snapshot, "disagreement").reason == "random"


def test_new_problems_starts_with_the_problem_that_has_no_labels():
    candidates = [cand(1, "old"), cand(2, "old"), cand(3, "new", age_min=5), cand(4, "new", age_min=6)]
    snapshot = QueueSnapshot(candidates, [vote(1, 1, 2, labeler=9)])
    pair = pick(snapshot, "new-problems")
    assert key(pair.first, pair.second) == (3, 4) and pair.reason == "new-problems"


def test_strategies_that_need_a_ranker_fall_back_to_random_without_one_and_say_why():
    snapshot = QueueSnapshot([cand(1), cand(2)], [])
    assert pick(snapshot, "uncertain").reason == NO_RANKER
    assert pick(snapshot, "disagreement").reason == NO_RANKER
    assert "no ranker" in NO_RANKER
    assert pick(snapshot, "random").reason == "random"


def test_a_labeler_never_sees_a_pair_twice_and_a_skip_counts_as_seen():
    snapshot = QueueSnapshot([cand(1), cand(2), cand(3)], [vote(1, 1, 2, labeler=1), vote(2, 3, 1, labeler=1,
                                                                                        choice="skip")])
    for seed in range(10):
        pair = pick(snapshot, "random", seed=seed)
        assert key(pair.first, pair.second) == (2, 3)


def test_an_undone_vote_makes_the_pair_available_again():
    snapshot = QueueSnapshot([cand(1), cand(2)], [vote(1, 1, 2, labeler=1, undone=True)])
    assert pick(snapshot, "random") is not None


def test_the_queue_is_empty_when_every_pair_is_done():
    snapshot = QueueSnapshot([cand(1), cand(2)], [vote(1, 1, 2, labeler=1)])
    assert pick(snapshot, "random") is None


def test_identical_sources_are_never_paired():
    snapshot = QueueSnapshot([cand(1, source_hash="same"), cand(2, source_hash="same")], [])
    assert pick(snapshot, "random") is None


def test_overlap_offers_a_pair_that_exactly_one_other_labeler_voted_on():
    snapshot = QueueSnapshot([cand(1), cand(2), cand(3)], [vote(1, 1, 3, labeler=2)])
    pair = pick(snapshot, "random", overlap=1.0)
    assert key(pair.first, pair.second) == (1, 3) and pair.reason == "overlap"


def test_without_overlap_pairs_voted_on_by_others_are_not_offered():
    snapshot = QueueSnapshot([cand(1), cand(2), cand(3)], [vote(1, 1, 3, labeler=2)])
    for seed in range(10):
        assert key(*(lambda p: (p.first, p.second))(pick(snapshot, "random", seed=seed))) != (1, 3)


def test_a_pair_with_two_labelers_is_not_offered_to_a_third():
    snapshot = QueueSnapshot([cand(1), cand(2)], [vote(1, 1, 2, labeler=2), vote(2, 1, 2, labeler=3)])
    assert pick(snapshot, "random", labeler=1, overlap=1.0) is None


def test_the_share_of_overlap_pairs_follows_the_setting():
    candidates = [cand(i) for i in range(1, 40)]
    others = [vote(i, i, i + 1, labeler=2) for i in range(1, 30)]
    snapshot = QueueSnapshot(candidates, others)
    reasons = [pick(snapshot, "random", overlap=0.2, seed=s).reason for s in range(400)]
    assert 0.14 < reasons.count("overlap") / len(reasons) < 0.26


def test_sides_are_randomised_so_position_bias_can_be_measured():
    snapshot = QueueSnapshot([cand(1), cand(2)], [])
    firsts = {pick(snapshot, "random", seed=s).first for s in range(30)}
    assert firsts == {1, 2}


def test_the_problem_filter_restricts_the_pool():
    snapshot = QueueSnapshot([cand(1, "p"), cand(2, "p"), cand(3, "q"), cand(4, "q")], [])
    pair = pick(snapshot, "random", problem_slug="q")
    assert key(pair.first, pair.second) == (3, 4)


def test_an_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown queue strategy"):
        pick(QueueSnapshot([cand(1), cand(2)], []), "best-first")
