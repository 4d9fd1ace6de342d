"""Training pairs: measured (correct, same device, >= 10 % apart, log-ratio weight), human, integrity."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from db.labels import CandidateEvidence, LabelRow
from engine.rank.pairs import PairSet, build_pairs, human_pairs, integrity_pairs, measured_pairs
from tests.rank_support import measured

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def cand(cid: int, us: float | None = None, problem: str = "p", device: str = "H200",
         cheat: bool = False) -> CandidateEvidence:
    measurements = (measured(device, us),) if us is not None else ()
    return CandidateEvidence(id=cid, problem_slug=problem, language="cuda", origin="library", strategy=None,
                             source=f"// {cid}", source_hash=str(cid), created_at=NOW, measurements=measurements,
                             integrity_violation=cheat, verdict="integrity_violation" if cheat else "correct")


def vote(lid: int, a: int, b: int, choice: str, labeler: int = 1, undone: bool = False) -> LabelRow:
    return LabelRow(id=lid, candidate_a_id=a, candidate_b_id=b, labeler_id=labeler, session_id=None, choice=choice,
                    tags=(), note="", blind=False, undone=undone, created_at=NOW)


def test_the_faster_candidate_wins_a_measured_pair_weighted_by_the_log_ratio():
    [pair] = measured_pairs([cand(1, 100.0), cand(2, 50.0)])
    assert (pair.a, pair.b, pair.target) == (1, 2, 0.0)  # 2 is faster, so a=1 loses
    assert pair.weight == pytest.approx(math.log(2))
    assert pair.source == "measured"


def repeated(cid: int, levels: tuple[float, ...], device: str = "H200") -> CandidateEvidence:
    """A candidate evaluated several times: one time (µs, no baseline) per evaluation."""
    item = cand(cid, levels[-1], device=device)
    return replace(item, measurements=(replace(item.measurements[0], levels=levels),))


def test_pairs_closer_than_ten_percent_are_left_out_even_when_the_difference_holds():
    steady_a, steady_b = (100.0, 100.2, 99.8, 100.1), (105.0, 105.2, 104.8, 105.1)
    assert measured_pairs([repeated(1, steady_a), repeated(2, steady_b)]) == []
    assert len(measured_pairs([repeated(1, steady_a), repeated(2, (111.0, 111.2, 110.8, 111.1))])) == 1


def test_a_ten_percent_gap_seen_once_each_does_not_hold_against_the_spread_between_runs():
    assert measured_pairs([cand(1, 100.0), cand(2, 111.0)]) == []


def test_candidates_timed_on_different_devices_or_problems_are_never_paired():
    assert measured_pairs([cand(1, 100.0, device="H200"), cand(2, 10.0, device="A100")]) == []
    assert measured_pairs([cand(1, 100.0, problem="p"), cand(2, 10.0, problem="q")]) == []


def test_candidates_without_a_correct_measurement_give_no_measured_pair():
    assert measured_pairs([cand(1, 100.0), cand(2)]) == []


def test_a_cheat_loses_to_every_honest_candidate_of_its_problem():
    pairs = integrity_pairs([cand(1, 100.0), cand(2, 200.0), cand(3, 1.0, cheat=True)])
    assert {(p.a, p.b, p.target) for p in pairs} == {(1, 3, 1.0), (2, 3, 1.0)}


def test_a_cheat_is_left_out_of_measured_pairs_however_fast_it_looked():
    assert measured_pairs([cand(1, 100.0), cand(3, 1.0, cheat=True)]) == []


def test_human_votes_map_to_targets_and_ties_count_half():
    evidence = {c.id: c for c in (cand(1), cand(2))}
    pairs = human_pairs([vote(1, 1, 2, "a"), vote(2, 1, 2, "b"), vote(3, 2, 1, "tie")], evidence)
    assert [p.target for p in pairs] == [1.0, 0.0, 0.5]


def test_both_bad_skip_and_undone_votes_are_not_training_pairs():
    evidence = {c.id: c for c in (cand(1), cand(2))}
    labels = [vote(1, 1, 2, "both_bad"), vote(2, 1, 2, "skip"), vote(3, 1, 2, "a", undone=True)]
    assert human_pairs(labels, evidence) == []


def test_human_votes_are_weighted_by_their_labelers_agreement_weight():
    evidence = {c.id: c for c in (cand(1), cand(2))}
    pairs = human_pairs([vote(1, 1, 2, "a", labeler=7), vote(2, 1, 2, "a", labeler=8)], evidence, {7: 0.9, 8: 0.1})
    assert [p.weight for p in pairs] == [0.9, 0.1]


def test_a_human_vote_for_a_cheat_is_overruled_by_the_integrity_pair():
    evidence = [cand(1), cand(2, cheat=True)]
    pairs = build_pairs(evidence, [vote(1, 2, 1, "a")])
    assert [(p.source, p.a, p.b, p.target) for p in pairs] == [("integrity", 1, 2, 1.0)]


def test_pairs_per_problem_are_capped_by_a_seeded_sample():
    evidence = [cand(i, float(2 ** i)) for i in range(1, 12)]
    first = measured_pairs(evidence, max_pairs_per_problem=10, seed=3)
    assert len(first) == 10 and first == measured_pairs(evidence, max_pairs_per_problem=10, seed=3)


def test_a_pair_set_indexes_rows_of_the_candidate_matrix():
    pairs = build_pairs([cand(10, 100.0), cand(20, 50.0)], [])
    arrays = PairSet.from_examples(pairs, {10: 0, 20: 1})
    assert arrays.a.tolist() == [0] and arrays.b.tolist() == [1] and arrays.counts()["measured"] == 1
