"""Scores from a stored ranker, for the reward, the labeling queue and best-of-N pre-screening.

A score is a Bradley–Terry log-strength: only differences within one problem mean anything, and
sigmoid(s_a - s_b) is the ranker's probability that a is the better (faster) candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from db.labels import load_evidence
from engine.rank.features import FeatureInput
from engine.rank.metrics import sigmoid
from engine.rank.store import load_ranker


def score_candidates(candidate_ids: list[int], model_version: int | None = None) -> dict[int, float]:
    """Candidate id → score under `model_version` (the newest ready model when None).

    Empty when no model exists (so callers can leave the ranker component out) or when no id is
    given; ids not in the database are left out. An explicit version that does not exist raises
    LookupError, since silently scoring with another model would mix versions.
    """
    ranker = load_ranker(model_version)
    if ranker is None:
        if model_version is not None:
            raise LookupError(f"no ready ranker version {model_version}")
        return {}
    if not candidate_ids:
        return {}
    evidence = load_evidence(candidate_ids)
    scores = ranker.score(evidence)
    return {e.id: float(s) for e, s in zip(evidence, scores, strict=True)}


def win_probability(score_a: float, score_b: float) -> float:
    """P(a better than b) under the ranker, from two scores of the same problem."""
    return float(sigmoid(np.array([score_a - score_b]))[0])


@dataclass(frozen=True)
class PrescreenResult:
    """Best-of-N pre-screening: which of N proposals to send to the GPU, best first.

    `order` ranks every item (indices into the input, best first); `keep` is the first `keep`
    of them; `scores[i]` is item i's score, or None when no model exists, in which case nothing
    is pruned and `keep` is every index in input order (without a model the GPU decides).
    """

    order: list[int]
    keep: list[int]
    scores: list[float | None]
    model_version: int | None


def prescreen(items: Sequence[str | FeatureInput | tuple[str, Mapping[str, Any] | None]], keep: int | None = None,
              model_version: int | None = None) -> PrescreenResult:
    """Rank N proposals of one problem before any GPU time is spent, and keep the `keep` best.

    An item is a source string, a `FeatureInput(source, features)`, or a `(source, features)`
    tuple, where `features` is the static-analysis dict (`Diagnostic.data["features"]`) when the
    proposal was already compiled and analysed on the CPU; without it the code tokens decide.
    """
    inputs = [_as_input(item) for item in items]
    ranker = load_ranker(model_version)
    if ranker is None:
        if model_version is not None:
            raise LookupError(f"no ready ranker version {model_version}")
        everything = list(range(len(inputs)))
        return PrescreenResult(order=everything, keep=everything, scores=[None] * len(inputs), model_version=None)
    scores = ranker.score(inputs)
    order = [int(i) for i in np.argsort(-scores, kind="stable")]
    count = len(order) if keep is None else max(0, min(keep, len(order)))
    return PrescreenResult(order=order, keep=order[:count], scores=[float(s) for s in scores],
                           model_version=ranker.version)


def _as_input(item: str | FeatureInput | tuple[str, Mapping[str, Any] | None]) -> FeatureInput:
    if isinstance(item, FeatureInput):
        return item
    if isinstance(item, str):
        return FeatureInput(source=item)
    source, features = item
    return FeatureInput(source=source, features=dict(features or {}))
