"""Bradley–Terry ordering of a problem's candidates from votes and measured pairs."""

from __future__ import annotations

import numpy as np

from engine.rank.bt import bradley_terry_order, fit_bradley_terry, order_from_pairs
from engine.rank.pairs import PairExample


def ex(a: int, b: int, target: float, weight: float = 1.0) -> PairExample:
    return PairExample(a=a, b=b, target=target, weight=weight, source="human", problem="p")


def test_a_chain_of_wins_gives_the_chain_order():
    order = order_from_pairs([ex(1, 2, 1.0), ex(2, 3, 1.0), ex(1, 3, 1.0)])
    assert [cid for cid, _ in order] == [1, 2, 3]


def test_strengths_are_finite_when_one_candidate_wins_everything():
    strengths = [s for _, s in order_from_pairs([ex(1, 2, 1.0)] * 50)]
    assert all(np.isfinite(strengths)) and strengths[0] > strengths[1]


def test_a_tie_counts_as_half_a_win_for_each():
    order = dict(order_from_pairs([ex(1, 2, 0.5), ex(2, 1, 0.5)]))
    assert abs(order[1] - order[2]) < 1e-9


def test_the_fit_recovers_known_strengths_from_many_games():
    rng = np.random.default_rng(0)
    truth = np.array([1.0, 0.0, -1.0, 0.5])
    i = rng.integers(0, 4, 4000)
    j = (i + rng.integers(1, 4, 4000)) % 4
    y = (rng.uniform(size=4000) < 1 / (1 + np.exp(-(truth[i] - truth[j])))).astype(float)
    s = fit_bradley_terry(4, i, j, y, np.ones(4000), ridge=1e-6)
    assert np.allclose(s, truth - truth.mean(), atol=0.15)


def test_the_problem_order_combines_measured_pairs_votes_and_integrity(refinery_home):
    from engine.rank.synthetic import SyntheticConfig, write_synthetic

    write_synthetic(SyntheticConfig(problems=1, candidates_per_problem=6, incorrect_share=0.0, integrity_share=0.2,
                                    seed=4))
    from db.labels import load_evidence

    evidence = load_evidence()
    order = bradley_terry_order(evidence[0].problem_slug)
    ids = [cid for cid, _ in order]
    cheats = {e.id for e in evidence if e.integrity_violation}
    timed = sorted((e.measurements[0].candidate_us, e.id) for e in evidence if e.measurements)
    assert cheats and all(ids.index(c) > ids.index(timed[0][1]) for c in cheats)
    assert ids[0] == timed[0][1]  # the fastest honest candidate comes first
    assert bradley_terry_order("no-such-problem") == []
