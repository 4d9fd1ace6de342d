"""Training a ranker version end to end: evidence and votes → pairs → split by problem → fit →
held-out evaluation beside the baselines → feature importance → a stored, versioned model.

`train_on` is pure (evidence in, model and metrics out) so tests and the benchmark run it without
a database; `train` adds the reads and the versioned write.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from db.labels import CandidateEvidence, LabelRow, RankerModelRow, list_labels, load_evidence
from engine.rank.agreement import agreement_from
from engine.rank.evaluate import evaluate_scores
from engine.rank.features import FEATURE_SCHEME, feature_names, static_keys, vectorize
from engine.rank.importance import permutation_importance
from engine.rank.model import FitConfig, PairwiseScorer, fit
from engine.rank.pairs import PairConfig, PairExample, PairSet, build_pairs
from engine.rank.split import split_problems
from engine.rank.store import load_ranker, save_ranker


class NoTrainingData(RuntimeError):
    """No pair to learn from: no measured pair far enough apart, no vote, no integrity verdict."""


@dataclass(frozen=True)
class TrainConfig:
    pairs: PairConfig = field(default_factory=PairConfig)
    fit: FitConfig = field(default_factory=FitConfig)
    holdout_share: float = 0.25
    seed: int = 0
    heldout_problems: tuple[str, ...] | None = None  # explicit held-out set instead of the seeded split
    refit_all: bool = False  # after evaluating, refit on every problem and store that model

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class TrainedModel:
    model: PairwiseScorer
    feature_names: list[str]
    metrics: dict[str, Any]
    data: dict[str, Any]


@dataclass
class _Design:
    rows: list[CandidateEvidence]
    x: np.ndarray
    pairs: PairSet


def _design(examples: Sequence[PairExample], by_id: Mapping[int, CandidateEvidence], names: Sequence[str]) -> _Design:
    ids = sorted({e.a for e in examples} | {e.b for e in examples})
    rows = [by_id[i] for i in ids]
    return _Design(rows=rows, x=vectorize(rows, names), pairs=PairSet.from_examples(examples, {i: k for k, i in
                                                                                            enumerate(ids)}))


def _summary(report: dict) -> dict:
    return {"all": report["all"], "by_source": report["by_source"]}


def train_on(evidence: Sequence[CandidateEvidence], labels: Sequence[LabelRow],
             config: TrainConfig | None = None, labeler_weights: Mapping[int, float] | None = None) -> TrainedModel:
    config = config or TrainConfig()
    started = time.perf_counter()
    by_id = {e.id: e for e in evidence}
    examples = build_pairs(evidence, labels, labeler_weights, config.pairs)
    if not examples:
        raise NoTrainingData("no training pairs: measure candidates, label pairs, or both")
    problems = sorted({e.problem for e in examples})
    if config.heldout_problems is not None:
        held = sorted(set(config.heldout_problems) & set(problems))
        train_problems = sorted(set(problems) - set(held))
    else:
        train_problems, held = split_problems(problems, config.holdout_share, config.seed)
    if not train_problems:
        raise NoTrainingData("every problem with pairs is held out; nothing left to train on")
    train_examples = [e for e in examples if e.problem in set(train_problems)]
    held_examples = [e for e in examples if e.problem in set(held)]
    train_ids = {e.a for e in train_examples} | {e.b for e in train_examples}
    names = feature_names(static_keys(by_id[i].features for i in train_ids))

    train_design = _design(train_examples, by_id, names)
    held_design = _design(held_examples, by_id, names) if held_examples else None
    # one matrix for the curve: training rows first, then held-out rows, pairs re-indexed into it
    x_all = train_design.x if held_design is None else np.concatenate([train_design.x, held_design.x])
    held_curve = None
    if held_design is not None:
        offset = len(train_design.rows)
        p = held_design.pairs
        held_curve = PairSet(p.a + offset, p.b + offset, p.target, p.weight, p.source, p.problem)
    result = fit(x_all, train_design.pairs, config.fit, heldout=held_curve)
    model = result.model

    metrics: dict[str, Any] = {"train": _summary(evaluate_scores(model.score(train_design.x), train_design.rows,
                                                                 train_design.pairs)),
                               "curve": result.curve, "fit_seconds": result.seconds, "steps": result.steps}
    if held_design is not None:
        metrics["heldout"] = evaluate_scores(model.score(held_design.x), held_design.rows, held_design.pairs)
        metrics["importance"] = permutation_importance(model, held_design.x, held_design.pairs, names, config.seed)
    else:
        metrics["heldout"] = None
        metrics["importance"] = permutation_importance(model, train_design.x, train_design.pairs, names, config.seed)

    if config.refit_all and held_examples:
        all_ids = {e.a for e in examples} | {e.b for e in examples}
        names = feature_names(static_keys(by_id[i].features for i in all_ids))
        everything = _design(examples, by_id, names)
        model = fit(everything.x, everything.pairs, config.fit).model

    data = {"scheme": FEATURE_SCHEME, "config": config.to_json(), "train_problems": train_problems,
            "heldout_problems": held, "candidates": len(train_ids),
            "pairs": {"train": train_design.pairs.counts(),
                      "heldout": held_design.pairs.counts() if held_design else {}},
            "labels_up_to_id": max((label.id for label in labels), default=0),
            "labeler_weights": {str(k): v for k, v in (labeler_weights or {}).items()},
            "refit_all": bool(config.refit_all and held_examples)}
    metrics["train_seconds"] = time.perf_counter() - started
    return TrainedModel(model=model, feature_names=list(names), metrics=metrics, data=data)


def _load() -> tuple[list[CandidateEvidence], list[LabelRow], dict[int, float]]:
    evidence = load_evidence()
    labels = list_labels()
    weights = agreement_from(labels, {e.id: e for e in evidence}, {}).weights() if labels else {}
    return evidence, labels, weights


def train(config: TrainConfig | None = None) -> RankerModelRow:
    """Train on everything in the database and store the result as the next version."""
    config = config or TrainConfig()
    evidence, labels, weights = _load()
    trained = train_on(evidence, labels, config, weights)
    return save_ranker(trained.model, trained.feature_names, config.fit.hidden, trained.data, trained.metrics)


def evaluate_version(version: int | None = None, problems: Sequence[str] | None = None) -> dict[str, Any]:
    """A stored version on today's data for `problems` (default: the problems it held out)."""
    ranker = load_ranker(version)
    if ranker is None:
        raise LookupError("no ranker trained yet" if version is None else f"no ready ranker version {version}")
    chosen = set(problems if problems is not None else ranker.row.data.get("heldout_problems", []))
    if not chosen:
        raise ValueError(f"version {ranker.version} held out no problem; name the problems to evaluate on")
    evidence, labels, weights = _load()
    pair_config = PairConfig(**ranker.row.data.get("config", {}).get("pairs", {}))
    examples = [e for e in build_pairs(evidence, labels, weights, pair_config) if e.problem in chosen]
    if not examples:
        raise NoTrainingData("no pairs on those problems")
    design = _design(examples, {e.id: e for e in evidence}, ranker.feature_names)
    report = evaluate_scores(ranker.model.score(design.x), design.rows, design.pairs)
    report["version"] = ranker.version
    report["problems"] = sorted(chosen)
    report["refit_all"] = bool(ranker.row.data.get("refit_all"))
    return report
