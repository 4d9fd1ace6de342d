"""The best result of each problem on each device: the code whose pooled median is fastest, after
reviews, with the interval it is known to.

"Best" is decided on what holds across evaluations (`engine.rank.pooled`): identical code pools its
evaluations, and one lucky evaluation cannot crown a source whose re-measurements were slower. Only
correct, admitted evaluations count (`db.labels.load_evidence`): a result a person rejected is out, and
a flagged result no person has reviewed yet is held back and counted as awaiting review beside the row.
Devices are never mixed: a GPU's speedup says nothing about a CPU's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from db import queries
from db.evaluations import list_flags
from db.labels import load_evidence
from engine.rank.comparable import ALPHA
from engine.rank.pooled import pool


@dataclass(frozen=True)
class BestResult:
    problem_slug: str
    target: str
    device: str | None
    baseline: str | None
    config: str | None
    candidate_id: int
    speedup: float  # the pooled median speedup of its code
    speedup_low: float  # 1 - alpha interval of that median
    speedup_high: float
    evaluations: int  # how many evaluations the median pools
    holds: bool  # faster than every other code measured there, by a difference that holds
    contenders: int  # codes measured in this context
    spread: float  # between-evaluation sd of a log time here (CPU timings move far more than GPU ones)
    run_id: int | None
    recorded: bool
    runs: int  # runs the problem has had
    awaiting_review: int  # flagged results of this problem and device no person has reviewed


def best_per_problem(problem_slugs: Sequence[str] = (), alpha: float = ALPHA) -> list[BestResult]:
    """One row per problem, target, device (and baseline and configuration timed), best first within none:
    sorted by problem, then device."""
    evidence = load_evidence(problem_slugs=list(problem_slugs) or None, with_source=False)
    contexts = [c for c in pool(evidence) if c.sources]
    winners = [(context, context.best()) for context in contexts]
    runs_of = queries.candidate_runs([best.representative for _, best in winners])
    run_counts = queries.run_counts()
    awaiting = Counter((flag.problem_slug, flag.device) for flag in list_flags(awaiting_only=True))
    out = []
    for context, best in winners:
        slug, target, device, baseline, config = context.key
        low, high = best.speedup_interval(context.spread.tau, alpha)
        run_id, recorded = runs_of.get(best.representative, (None, False))
        out.append(BestResult(slug, target, device, baseline, config, best.representative, best.speedup, low, high,
                              best.n, context.best_holds(alpha), len(context.sources), context.spread.tau, run_id,
                              recorded, run_counts.get(slug, 0), awaiting.get((slug, device), 0)))
    return sorted(out, key=lambda b: (b.problem_slug, str(b.device), str(b.baseline), str(b.config)))
