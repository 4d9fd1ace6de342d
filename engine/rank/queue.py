"""Which pair a labeler sees next: pure choice over a snapshot of candidates, votes and scores.

Strategies (the session's `queue`), each drawing two candidates of the same problem:
- uncertain: pairs the current ranker is least sure about (scores closest together);
- disagreement: pairs measured >= 10 % apart that the ranker orders the wrong way, most
  confidently wrong first (the labels that teach it the most or expose a bad measurement);
- new-problems: problems with the fewest labelled pairs first, newest problems breaking ties;
- random: any pair.
Without a ranker, "uncertain" and "disagreement" fall back to random, and say so: each such pair's
reason is NO_RANKER, and `needs_ranker` lets a page warn before the session starts.

Overlap: with probability `overlap_share` the labeler is first offered a pair that exactly one
other labeler has voted on (oldest first), so that agreement can be measured; otherwise only
pairs nobody has voted on are offered. A labeler never sees a pair twice (a skip counts as
seen), and only comparable candidates are paired (`engine.rank.comparable`: same problem and target,
not the same code once comments and whitespace are gone, measured on the same device against the
same baseline where both were measured).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from db.labels import CandidateEvidence, LabelRow
from engine.rank.baselines import measured_log_ratio
from engine.rank.comparable import comparable, target_of
from engine.rank.pairs import MIN_RATIO

STRATEGIES = ("uncertain", "disagreement", "new-problems", "random")
RANKED_STRATEGIES = ("uncertain", "disagreement")  # these order pairs by the ranker's scores
NO_RANKER = "random: no ranker trained yet, so nothing to order the pairs by"
PairKey = tuple[int, int]
_NEIGHBOURS = 6  # uncertain: pairs up to this many places apart in score order
_MAX_PAIRS = 3000  # per problem, for strategies that enumerate pairs


@dataclass(frozen=True)
class QueuedPair:
    first: int
    second: int
    reason: str  # the strategy that chose it, "overlap", or "random" after a fallback


@dataclass
class QueueSnapshot:
    candidates: Sequence[CandidateEvidence]
    labels: Sequence[LabelRow]
    scores: Mapping[int, float] = field(default_factory=dict)


def needs_ranker(strategy: str) -> bool:
    """Whether `strategy` orders pairs by a ranker's scores (and serves random pairs without one)."""
    return strategy in RANKED_STRATEGIES


def key(a: int, b: int) -> PairKey:
    return (a, b) if a < b else (b, a)


def _pools(candidates: Sequence[CandidateEvidence], problem_slug: str | None) -> dict[str, list[CandidateEvidence]]:
    """Per problem and target ("relu:cuda", "gemm:c-cpu"), one candidate per equivalence class (the earliest):
    a pool holds only candidates that answer the same task, and the same code twice is one candidate."""
    pools: dict[str, dict[str, CandidateEvidence]] = defaultdict(dict)
    for c in sorted(candidates, key=lambda c: c.id):
        if problem_slug is None or c.problem_slug == problem_slug:
            pools[f"{c.problem_slug}:{target_of(c)}"].setdefault(c.equivalence or c.source_hash, c)
    return {name: list(by_code.values()) for name, by_code in pools.items() if len(by_code) >= 2}


def _all_pairs(pool: Sequence[CandidateEvidence], rng: random.Random) -> list[PairKey]:
    n = len(pool)
    if n * (n - 1) // 2 <= _MAX_PAIRS:
        pairs = [key(pool[i].id, pool[j].id) for i in range(n) for j in range(i + 1, n)]
    else:
        pairs = list({key(*(c.id for c in rng.sample(list(pool), 2))) for _ in range(_MAX_PAIRS)})
    rng.shuffle(pairs)
    return pairs


def _uncertain(pools: Mapping[str, list[CandidateEvidence]], scores: Mapping[int, float],
               rng: random.Random) -> Iterator[PairKey]:
    ranked = []
    for pool in pools.values():
        scored = sorted((c for c in pool if c.id in scores), key=lambda c: scores[c.id])
        for i in range(len(scored)):
            for j in range(i + 1, min(len(scored), i + 1 + _NEIGHBOURS)):
                a, b = scored[i].id, scored[j].id
                ranked.append((abs(scores[a] - scores[b]), rng.random(), key(a, b)))
    yield from (pair for *_, pair in sorted(ranked))


def _disagreement(pools: Mapping[str, list[CandidateEvidence]], scores: Mapping[int, float],
                  rng: random.Random, min_ratio: float) -> Iterator[PairKey]:
    wrong = []
    margin = math.log(min_ratio) - 1e-12
    by_id = {c.id: c for pool in pools.values() for c in pool}
    for pool in pools.values():
        measured = [c for c in pool if c.measurements and c.id in scores]
        for a, b in _all_pairs(measured, rng) if len(measured) >= 2 else []:
            ratio = measured_log_ratio(by_id[a], by_id[b])  # > 0: a faster
            if ratio is None or abs(ratio) < margin:
                continue
            faster, slower = (a, b) if ratio > 0 else (b, a)
            gap = scores[faster] - scores[slower]
            if gap < 0:
                wrong.append((gap, rng.random(), key(a, b)))
    yield from (pair for *_, pair in sorted(wrong))


def _new_problems(pools: Mapping[str, list[CandidateEvidence]], labels: Sequence[LabelRow],
                  rng: random.Random) -> Iterator[PairKey]:
    counts: dict[str, int] = defaultdict(int)
    slug_of = {c.id: name for name, pool in pools.items() for c in pool}
    for label in labels:
        if not label.undone and label.choice != "skip" and label.candidate_a_id in slug_of:
            counts[slug_of[label.candidate_a_id]] += 1
    newest: dict[str, datetime] = {slug: max(c.created_at for c in pool) for slug, pool in pools.items()}
    order = sorted(pools, key=lambda s: (counts[s], -newest[s].timestamp(), s))
    for slug in order:
        yield from _all_pairs(pools[slug], rng)


def _random(pools: Mapping[str, list[CandidateEvidence]], rng: random.Random) -> Iterator[PairKey]:
    slugs = sorted(pools)
    weights = [len(pools[s]) * (len(pools[s]) - 1) / 2 for s in slugs]
    for _ in range(200):  # cheap draws first; the full enumeration only when those keep hitting seen pairs
        slug = rng.choices(slugs, weights=weights)[0]
        a, b = rng.sample(pools[slug], 2)
        yield key(a.id, b.id)
    pairs = [pair for slug in slugs for pair in _all_pairs(pools[slug], rng)]
    rng.shuffle(pairs)
    yield from pairs


def choose_pair(snapshot: QueueSnapshot, labeler_id: int, strategy: str, *, overlap_share: float = 0.0,
                rng: random.Random | None = None, problem_slug: str | None = None,
                min_ratio: float = MIN_RATIO) -> QueuedPair | None:
    """The next pair for `labeler_id`, or None when every allowed pair is done."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown queue strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    rng = rng or random.Random()
    pools = _pools(snapshot.candidates, problem_slug)
    if not pools:
        return None
    by_id = {c.id: c for pool in pools.values() for c in pool}
    in_pool = set(by_id)
    seen_by_me: set[PairKey] = set()
    labelled: dict[PairKey, set[int]] = defaultdict(set)
    first_vote: dict[PairKey, int] = {}
    for label in snapshot.labels:
        if label.undone:
            continue
        pair = key(label.candidate_a_id, label.candidate_b_id)
        if label.labeler_id == labeler_id:
            seen_by_me.add(pair)
        elif label.choice != "skip":
            labelled[pair].add(label.labeler_id)
            first_vote.setdefault(pair, label.id)

    if overlap_share > 0 and rng.random() < overlap_share:
        waiting = sorted((first_vote[p], p) for p, raters in labelled.items()
                         if len(raters) == 1 and p not in seen_by_me and p[0] in in_pool and p[1] in in_pool
                         and comparable(by_id[p[0]], by_id[p[1]]))
        if waiting:
            return _sides(waiting[0][1], "overlap", rng)

    def fresh(pair: PairKey) -> bool:
        return pair not in seen_by_me and not labelled.get(pair) and comparable(by_id[pair[0]], by_id[pair[1]])

    scores = snapshot.scores
    generators: list[tuple[str, Iterator[PairKey]]] = []
    if strategy == "uncertain" and scores:
        generators.append(("uncertain", _uncertain(pools, scores, rng)))
    elif strategy == "disagreement" and scores:
        generators.append(("disagreement", _disagreement(pools, scores, rng, min_ratio)))
    elif strategy == "new-problems":
        generators.append(("new-problems", _new_problems(pools, snapshot.labels, rng)))
    generators.append((NO_RANKER if strategy in RANKED_STRATEGIES and not scores else "random", _random(pools, rng)))
    for reason, pairs in generators:
        for pair in pairs:
            if fresh(pair):
                return _sides(pair, reason, rng)
    return None


def _sides(pair: PairKey, reason: str, rng: random.Random) -> QueuedPair:
    """Random left/right placement, so position bias averages out and can be measured."""
    a, b = pair if rng.random() < 0.5 else (pair[1], pair[0])
    return QueuedPair(first=a, second=b, reason=reason)
