"""Bradley–Terry ordering of one problem's candidates from its human votes and measured pairs.

The same pairs the ranker trains on (ties as 0.5, cheats always losing, measured pairs weighted
by their log ratio, votes by their labeler's weight) are fitted directly, one strength per
candidate, by Newton's method on the weighted BT log-likelihood. A small ridge term keeps the
strengths finite when one candidate wins every comparison or the comparison graph falls apart
into pieces; strengths are centred, and s_i - s_j is the log-odds that i beats j.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from db.labels import CandidateEvidence, list_labels, load_evidence
from engine.rank.agreement import agreement_report
from engine.rank.comparable import target_of
from engine.rank.metrics import sigmoid
from engine.rank.pairs import PairConfig, PairExample, build_pairs


def fit_bradley_terry(n_items: int, i: np.ndarray, j: np.ndarray, y: np.ndarray, w: np.ndarray,
                      ridge: float = 1e-2, iterations: int = 100, tol: float = 1e-9) -> np.ndarray:
    """Strengths s maximising sum w * [y log sig(s_i - s_j) + (1 - y) log sig(s_j - s_i)] - ridge/2 |s|^2."""
    s = np.zeros(n_items)
    if n_items == 0 or len(i) == 0:
        return s
    for _ in range(iterations):
        p = sigmoid(s[i] - s[j])
        r = w * (y - p)
        grad = -ridge * s
        np.add.at(grad, i, r)
        np.add.at(grad, j, -r)
        c = w * p * (1.0 - p)
        hessian = np.zeros((n_items, n_items))
        np.add.at(hessian, (i, i), c)
        np.add.at(hessian, (j, j), c)
        np.add.at(hessian, (i, j), -c)
        np.add.at(hessian, (j, i), -c)
        hessian[np.diag_indices(n_items)] += ridge
        step = np.linalg.solve(hessian, grad)
        s += step
        if np.max(np.abs(step)) < tol:
            break
    return s - s.mean()


def order_from_pairs(pairs: Sequence[PairExample]) -> list[tuple[int, float]]:
    """(candidate id, strength), strongest first, over the candidates the pairs mention."""
    ids = sorted({p.a for p in pairs} | {p.b for p in pairs})
    index = {cid: k for k, cid in enumerate(ids)}
    i = np.array([index[p.a] for p in pairs], dtype=np.int64)
    j = np.array([index[p.b] for p in pairs], dtype=np.int64)
    y = np.array([p.target for p in pairs], dtype=np.float64)
    w = np.array([p.weight for p in pairs], dtype=np.float64)
    s = fit_bradley_terry(len(ids), i, j, y, w)
    return sorted(((cid, float(s[index[cid]])) for cid in ids), key=lambda t: (-t[1], t[0]))


def bradley_terry_orders(problem_slug: str, config: PairConfig | None = None,
                         evidence: Sequence[CandidateEvidence] | None = None) -> dict[str, list[tuple[int, float]]]:
    """Per target ("cuda", "c-cpu"), the problem's candidates that have any comparison, strongest first,
    with their BT strengths. Pairs never cross targets, so one order over both would put strengths of
    unconnected groups side by side as if they were comparable.

    Candidates with no vote, no measured partner and no integrity verdict have nothing to be
    ordered by and are left out (so is every equivalent copy of a candidate: it is one candidate);
    `engine.rank.score_candidates` ranks those from features.
    """
    if evidence is None:
        evidence = load_evidence(problem_slugs=[problem_slug], with_source=False)
    by_id = {e.id: e for e in evidence}
    labels = [label for label in list_labels(problem_slug=problem_slug)
              if label.candidate_a_id in by_id and label.candidate_b_id in by_id]
    weights = agreement_report().weights() if labels else {}
    by_target: dict[str, list[PairExample]] = {}
    for pair in build_pairs(evidence, labels, weights, config):
        by_target.setdefault(target_of(by_id[pair.a]), []).append(pair)
    return {target: order_from_pairs(pairs) for target, pairs in sorted(by_target.items())}


def bradley_terry_order(problem_slug: str, config: PairConfig | None = None,
                        target: str = "cuda") -> list[tuple[int, float]]:
    """`bradley_terry_orders` for one target (CUDA unless asked)."""
    return bradley_terry_orders(problem_slug, config).get(target, [])
