"""The offline pairwise ranker and the pair-labeling workflow behind it.

Offers:
- `score_candidates(ids, model_version=None)` → {id: score}: Bradley–Terry log-strengths from
  the newest (or a named) ranker; empty when no model exists. Compare scores within one problem.
- `prescreen(items, keep=None)` → `PrescreenResult`: best-of-N pre-screening of proposals
  (sources, optionally with static features) before GPU evaluation.
- `bradley_terry_orders(problem_slug)` → {target: [(candidate_id, strength)]}, strongest first,
  fitted from human votes and measured pairs (ties as 0.5, cheats always losing), one order per
  target (CUDA, C on the CPU); `bradley_terry_order(problem_slug, target="cuda")` for one.
- `agreement_report()` → `AgreementReport`: Cohen's kappa per labeler and overall, and
  agreement with measurement.
- `train(config)`, `evaluate_version(version)`, `list_rankers()`, `win_probability(a, b)`.
The labeling workflow (sign-in, sessions, the queue, votes, undo) is `engine.rank.labeling`.

Names load on first use, so importing this package (the CLI does) does not import torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "score_candidates": "engine.rank.scoring",
    "prescreen": "engine.rank.scoring",
    "PrescreenResult": "engine.rank.scoring",
    "win_probability": "engine.rank.scoring",
    "bradley_terry_order": "engine.rank.bt",
    "bradley_terry_orders": "engine.rank.bt",
    "agreement_report": "engine.rank.agreement",
    "AgreementReport": "engine.rank.agreement",
    "train": "engine.rank.training",
    "TrainConfig": "engine.rank.training",
    "evaluate_version": "engine.rank.training",
    "NoTrainingData": "engine.rank.training",
    "list_rankers": "engine.rank.store",
    "load_ranker": "engine.rank.store",
    "FeatureInput": "engine.rank.features",
}
__all__ = [
    "AgreementReport", "FeatureInput", "NoTrainingData", "PrescreenResult", "TrainConfig", "agreement_report",
    "bradley_terry_order", "bradley_terry_orders", "evaluate_version", "list_rankers", "load_ranker", "prescreen",
    "score_candidates", "train", "win_probability",
]

if TYPE_CHECKING:
    from engine.rank.agreement import AgreementReport, agreement_report
    from engine.rank.bt import bradley_terry_order, bradley_terry_orders
    from engine.rank.features import FeatureInput
    from engine.rank.scoring import PrescreenResult, prescreen, score_candidates, win_probability
    from engine.rank.store import list_rankers, load_ranker
    from engine.rank.training import NoTrainingData, TrainConfig, evaluate_version, train


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'engine.rank' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
