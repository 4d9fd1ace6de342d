"""Agreement of labelers with each other (Cohen's kappa on overlapping pairs) and with the stopwatch.

A vote is first put in a canonical form, independent of which side each candidate was shown on:
the pair is (lower id, higher id) and the outcome is "lo", "hi", "tie" or "both_bad"; skips are
not votes. Only each labeler's newest live vote on a pair counts.

- Per labeler: kappa of the labeler's outcomes against every other labeler's on the same pairs.
- Overall: kappa over all pooled rating pairs (each two labelers of one pair, ordered by id).
- With measurement: on pairs measured >= 10 % apart on a shared device, the share of the
  labeler's A/B/tie votes that name the faster candidate (a tie there counts as a miss).

Each labeler also gets a training weight 2q - 1, where q is their agreement rate (with others
and with measurement), shrunk towards a prior of 0.75 with the weight of four votes: chance
agreement earns nothing, a newcomer starts at 0.5, and a reliable labeler approaches 1.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

from db.labels import CandidateEvidence, LabelRow, list_labelers, list_labels, load_evidence
from engine.rank.baselines import measured_log_ratio
from engine.rank.pairs import MIN_RATIO

PairKey = tuple[int, int]
PRIOR_AGREEMENT = 0.75
PRIOR_STRENGTH = 4.0
MIN_WEIGHT = 0.05
MIN_KAPPA_PAIRS = 20  # below this many overlapping pairs a kappa says little (1.00 from 2 pairs is luck)


def canonical(label: LabelRow) -> tuple[PairKey, str] | None:
    """The side-independent (pair, outcome) of a vote; None for a skip."""
    a, b = label.candidate_a_id, label.candidate_b_id
    key = (min(a, b), max(a, b))
    if label.choice in ("tie", "both_bad"):
        return key, label.choice
    if label.choice in ("a", "b"):
        winner = a if label.choice == "a" else b
        return key, "lo" if winner == key[0] else "hi"
    return None


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Cohen's kappa of two raters' categorical ratings of the same items; None with no items."""
    n = len(first)
    if n == 0 or n != len(second):
        return None
    observed = sum(x == y for x, y in zip(first, second, strict=True)) / n
    expected = sum((first.count(c) / n) * (second.count(c) / n) for c in set(first) | set(second))
    if expected >= 1.0:
        return 1.0 if observed >= 1.0 else 0.0
    return (observed - expected) / (1.0 - expected)


@dataclass(frozen=True)
class LabelerAgreement:
    labeler_id: int
    name: str
    votes: int
    overlap_pairs: int
    kappa: float | None
    measured_votes: int
    measured_agreement: float | None
    weight: float


@dataclass(frozen=True)
class AgreementReport:
    labelers: tuple[LabelerAgreement, ...]
    overall_kappa: float | None
    overlap_pairs: int
    rating_pairs: int
    raw_agreement: float | None
    measured_votes: int
    measured_agreement: float | None
    left_share: float | None = None  # of live A/B votes, the share for the left side: 0.5 = no position bias

    @property
    def kappa_caveat(self) -> str | None:
        """Why the overall kappa should not be trusted yet, in words; None when it rests on enough pairs."""
        return kappa_caveat(self.overlap_pairs)

    def weights(self) -> dict[int, float]:
        return {row.labeler_id: row.weight for row in self.labelers}

    def to_json(self) -> dict:
        return asdict(self)


def kappa_caveat(overlap_pairs: int) -> str | None:
    """Said beside a kappa from fewer than MIN_KAPPA_PAIRS overlapping pairs, wherever it is shown."""
    if overlap_pairs >= MIN_KAPPA_PAIRS:
        return None
    if overlap_pairs == 0:
        return "no pair was labelled by two people yet, so there is no kappa"
    return (f"from only {overlap_pairs} overlapping pair(s): too few to judge agreement "
            f"({MIN_KAPPA_PAIRS} or more are needed)")


def latest_votes(labels: Sequence[LabelRow]) -> dict[tuple[int, PairKey], str]:
    """(labeler, pair) → outcome of that labeler's newest live, non-skip vote."""
    out: dict[tuple[int, PairKey], str] = {}
    for label in sorted(labels, key=lambda r: r.id):
        form = canonical(label)
        if form and not label.undone:
            out[(label.labeler_id, form[0])] = form[1]
    return out


def measured_winners(evidence: Mapping[int, CandidateEvidence], keys: Sequence[PairKey],
                     min_ratio: float = MIN_RATIO) -> dict[PairKey, str]:
    """Pair → "lo"/"hi" for pairs measured at least `min_ratio` apart, neither a cheat."""
    out = {}
    for lo, hi in keys:
        x, y = evidence.get(lo), evidence.get(hi)
        if x is None or y is None or x.integrity_violation or y.integrity_violation:
            continue
        ratio = measured_log_ratio(x, y)
        if ratio is not None and abs(ratio) >= math.log(min_ratio) - 1e-12:
            out[(lo, hi)] = "lo" if ratio > 0 else "hi"
    return out


def _weight(hits: float, n: float) -> float:
    q = (hits + PRIOR_AGREEMENT * PRIOR_STRENGTH) / (n + PRIOR_STRENGTH)
    return max(MIN_WEIGHT, 2.0 * q - 1.0)


def compute_agreement(labels: Sequence[LabelRow], names: Mapping[int, str],
                      winners: Mapping[PairKey, str]) -> AgreementReport:
    """The agreement report from votes, labeler names and measured winners (pure)."""
    votes = latest_votes(labels)
    by_pair: dict[PairKey, dict[int, str]] = defaultdict(dict)
    for (labeler, key), outcome in votes.items():
        by_pair[key][labeler] = outcome
    overlap = {key: raters for key, raters in by_pair.items() if len(raters) >= 2}
    pooled: tuple[list[str], list[str]] = ([], [])
    mine: dict[int, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
    for raters in overlap.values():
        ids = sorted(raters)
        for i, first in enumerate(ids):
            for second in ids[i + 1:]:
                pooled[0].append(raters[first])
                pooled[1].append(raters[second])
                for me, other in ((first, second), (second, first)):
                    mine[me][0].append(raters[me])
                    mine[me][1].append(raters[other])
    measured: dict[int, list[bool]] = defaultdict(list)
    for (labeler, key), outcome in votes.items():
        if key in winners and outcome != "both_bad":
            measured[labeler].append(outcome == winners[key])
    rows = []
    labeler_ids = sorted({labeler for labeler, _ in votes} | set(names))
    for labeler in labeler_ids:
        own, others = mine.get(labeler, ([], []))
        hits_measured = measured.get(labeler, [])
        hits = sum(x == y for x, y in zip(own, others, strict=True)) + sum(hits_measured)
        rows.append(LabelerAgreement(
            labeler_id=labeler, name=names.get(labeler, f"#{labeler}"),
            votes=sum(1 for (who, _k) in votes if who == labeler),
            overlap_pairs=sum(1 for raters in overlap.values() if labeler in raters),
            kappa=cohen_kappa(own, others), measured_votes=len(hits_measured),
            measured_agreement=sum(hits_measured) / len(hits_measured) if hits_measured else None,
            weight=_weight(hits, len(own) + len(hits_measured))))
    all_measured = [hit for hits in measured.values() for hit in hits]
    sided = [label.choice == "a" for label in labels if not label.undone and label.choice in ("a", "b")]
    n_pairs = len(pooled[0])
    return AgreementReport(
        labelers=tuple(rows), overall_kappa=cohen_kappa(*pooled), overlap_pairs=len(overlap), rating_pairs=n_pairs,
        raw_agreement=sum(x == y for x, y in zip(*pooled, strict=True)) / n_pairs if n_pairs else None,
        measured_votes=len(all_measured),
        measured_agreement=sum(all_measured) / len(all_measured) if all_measured else None,
        left_share=sum(sided) / len(sided) if sided else None)


def agreement_from(labels: Sequence[LabelRow], evidence: Mapping[int, CandidateEvidence],
                   names: Mapping[int, str]) -> AgreementReport:
    keys = sorted({form[0] for label in labels if (form := canonical(label))})
    return compute_agreement(labels, names, measured_winners(evidence, keys))


def agreement_report() -> AgreementReport:
    """Agreement over every live vote in the database."""
    labels = list_labels()
    ids = sorted({i for label in labels for i in (label.candidate_a_id, label.candidate_b_id)})
    evidence = {e.id: e for e in load_evidence(ids, with_source=False)} if ids else {}
    names = {row.id: row.name for row in list_labelers()}
    return agreement_from(labels, evidence, names)
