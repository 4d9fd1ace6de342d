"""Training pairs: what the ranker learns from, each with a target P(a better than b) and a weight.

Every pair is of two comparable candidates (`engine.rank.comparable`: same problem, same target, not
the same code, and measured on the same device against the same baseline where measured). Sources:
- measured: both correct in the same context, identical code pooled into one source, their pooled
  medians at least `min_ratio` apart and the difference holding against the spread between evaluations
  (`engine.rank.pooled`; the test, its p-value, level and interval go on the pair); the faster pooled
  median wins, weighted by |log ratio| so that a 3x gap counts more than a 10 % one.
- human: votes A/B/tie (tie = 0.5), weighted by the labeler's agreement weight; "both bad" says
  nothing about order and "skip" nothing at all, so both are left out.
- integrity: a candidate caught cheating loses to every comparable candidate of its problem, whatever
  a labeler or a timer said about it (its human and measured pairs are dropped).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from db.labels import CandidateEvidence, LabelRow
from engine.rank.comparable import ALPHA, comparable, target_of
from engine.rank.pooled import held_difference, pool

MIN_RATIO = 1.10
SOURCES = ("measured", "human", "integrity")
HUMAN_TARGETS = {"a": 1.0, "b": 0.0, "tie": 0.5}
DEFAULT_LABELER_WEIGHT = 0.5


@dataclass(frozen=True)
class PairExample:
    a: int
    b: int
    target: float  # P(a better than b)
    weight: float
    source: str  # measured | human | integrity
    problem: str
    log_ratio: float | None = None  # measured: |log(t_slow / t_fast)|
    test: str | None = None  # measured: what decided the difference was real
    p_value: float | None = None
    alpha: float | None = None  # the level it was tested at
    device: str | None = None  # measured: the context both were timed in
    baseline: str | None = None
    config: str | None = None
    ratio_interval: tuple[float, float] | None = None  # measured: 1 - alpha interval of slow/fast
    evaluations: tuple[int, int] | None = None  # measured: how many evaluations each side pools
    spread: float | None = None  # measured: the between-evaluation spread (log) it was judged against


@dataclass(frozen=True)
class PairConfig:
    min_ratio: float = MIN_RATIO
    alpha: float = ALPHA
    use_measured: bool = True
    use_human: bool = True
    use_integrity: bool = True
    human_weight: float = 1.0
    integrity_weight: float = 1.0
    max_pairs_per_problem: int = 20_000
    seed: int = 0


def _cap(n: int, cap: int, rng: np.random.Generator) -> np.ndarray:
    return np.sort(rng.choice(n, size=cap, replace=False)) if n > cap else np.arange(n)


def _representatives(items: list[tuple[CandidateEvidence, object]]) -> list[tuple[CandidateEvidence, object]]:
    """One entry per equivalence class (the earliest candidate): the same code twice is one candidate."""
    seen: dict[str, tuple[CandidateEvidence, object]] = {}
    for item in sorted(items, key=lambda pair: pair[0].id):
        seen.setdefault(item[0].equivalence or f"id:{item[0].id}", item)
    return list(seen.values())


def measured_pairs(evidence: Sequence[CandidateEvidence], min_ratio: float = MIN_RATIO,
                   max_pairs_per_problem: int = 20_000, seed: int = 0, alpha: float = ALPHA) -> list[PairExample]:
    """Pairs of correct sources measured in one context whose difference holds across evaluations
    (`engine.rank.pooled`): identical code pooled, the faster pooled median wins."""
    rng = np.random.default_rng(seed)
    margin = math.log(min_ratio)
    out: list[PairExample] = []
    for context in pool(evidence):
        sources = context.sources
        candidates = [(i, j) for i in range(len(sources)) for j in range(i + 1, len(sources))
                      if abs(sources[i].centre - sources[j].centre) >= margin - 1e-12]
        for k in _cap(len(candidates), max_pairs_per_problem, rng):
            a, b = sources[candidates[k][0]], sources[candidates[k][1]]
            found = held_difference(a, b, context.spread, alpha, min_ratio)
            if not found.real:
                continue
            problem, _, device, baseline, config = context.key
            out.append(PairExample(a=a.representative, b=b.representative, target=1.0 if found.log_ratio > 0 else 0.0,
                                   weight=abs(found.log_ratio), source="measured", problem=problem,
                                   log_ratio=abs(found.log_ratio), test=found.test, p_value=found.p_value,
                                   alpha=alpha, device=device, baseline=baseline, config=config,
                                   ratio_interval=(found.ratio_low, found.ratio_high),
                                   evaluations=(a.n, b.n), spread=context.spread.tau))
    return out


def integrity_pairs(evidence: Sequence[CandidateEvidence], weight: float = 1.0,
                    max_pairs_per_problem: int = 20_000, seed: int = 0) -> list[PairExample]:
    """Each cheating candidate against each honest one of its problem; the honest one wins."""
    by_problem: dict[str, list[CandidateEvidence]] = defaultdict(list)
    for item in evidence:
        by_problem[item.problem_slug].append(item)
    rng = np.random.default_rng(seed + 1)
    out: list[PairExample] = []
    for problem, items in sorted(by_problem.items()):
        cheats = [c for c, _ in _representatives([(c, None) for c in items if c.integrity_violation])]
        honest = [c for c, _ in _representatives([(c, None) for c in items if not c.integrity_violation])]
        combos = [(h.id, c.id) for c in cheats for h in honest if target_of(h) == target_of(c)
                  and not (h.equivalence and h.equivalence == c.equivalence)]
        for k in _cap(len(combos), max_pairs_per_problem, rng):
            h, c = combos[k]
            out.append(PairExample(a=h, b=c, target=1.0, weight=weight, source="integrity", problem=problem))
    return out


def human_pairs(labels: Sequence[LabelRow], evidence_by_id: Mapping[int, CandidateEvidence],
                labeler_weights: Mapping[int, float] | None = None, human_weight: float = 1.0) -> list[PairExample]:
    """Live A/B/tie votes on pairs of one problem, neither of them a cheat."""
    weights = labeler_weights or {}
    out: list[PairExample] = []
    for label in labels:
        target = HUMAN_TARGETS.get(label.choice)
        a, b = evidence_by_id.get(label.candidate_a_id), evidence_by_id.get(label.candidate_b_id)
        if label.undone or target is None or a is None or b is None or not comparable(a, b):
            continue
        if a.integrity_violation or b.integrity_violation:
            continue
        weight = human_weight * weights.get(label.labeler_id, DEFAULT_LABELER_WEIGHT)
        if weight > 0:
            out.append(PairExample(a=a.id, b=b.id, target=target, weight=weight, source="human",
                                   problem=a.problem_slug))
    return out


def build_pairs(evidence: Sequence[CandidateEvidence], labels: Sequence[LabelRow],
                labeler_weights: Mapping[int, float] | None = None,
                config: PairConfig | None = None) -> list[PairExample]:
    config = config or PairConfig()
    out: list[PairExample] = []
    if config.use_measured:
        out += measured_pairs(evidence, config.min_ratio, config.max_pairs_per_problem, config.seed, config.alpha)
    if config.use_human:
        out += human_pairs(labels, {e.id: e for e in evidence}, labeler_weights, config.human_weight)
    if config.use_integrity:
        out += integrity_pairs(evidence, config.integrity_weight, config.max_pairs_per_problem, config.seed)
    return out


@dataclass
class PairSet:
    """Pairs as arrays of row indices into a candidate feature matrix, ready for torch."""

    a: np.ndarray
    b: np.ndarray
    target: np.ndarray
    weight: np.ndarray
    source: np.ndarray
    problem: np.ndarray

    def __len__(self) -> int:
        return len(self.a)

    @classmethod
    def from_examples(cls, examples: Sequence[PairExample], row_of: Mapping[int, int]) -> PairSet:
        return cls(a=np.array([row_of[e.a] for e in examples], dtype=np.int64),
                   b=np.array([row_of[e.b] for e in examples], dtype=np.int64),
                   target=np.array([e.target for e in examples], dtype=np.float32),
                   weight=np.array([e.weight for e in examples], dtype=np.float32),
                   source=np.array([e.source for e in examples], dtype=object),
                   problem=np.array([e.problem for e in examples], dtype=object))

    def subset(self, mask: np.ndarray) -> PairSet:
        return PairSet(self.a[mask], self.b[mask], self.target[mask], self.weight[mask], self.source[mask],
                       self.problem[mask])

    def counts(self) -> dict[str, int]:
        return {s: int((self.source == s).sum()) for s in SOURCES}
