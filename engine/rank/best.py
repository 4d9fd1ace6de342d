"""The best result of each problem on each device: the code whose pooled median is fastest, after
reviews, with the interval it is known to.

"Best" is decided on what holds across evaluations (`engine.rank.pooled`): identical code pools its
evaluations, and one lucky evaluation cannot crown a source whose re-measurements were slower. Only
correct, admitted evaluations count (`db.labels.load_evidence`): a result a person rejected is out, and
a flagged result no person has reviewed yet is held back and counted as awaiting review beside the row.
Devices are never mixed: a GPU's speedup says nothing about a CPU's.

A run's own best (`run_bests`, the run page's "Best speedup" and the Runs list) follows the same rule
over the run's candidates only, so it changes with the run and nothing else, and says whether it holds
over the run's runner-up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from db import queries
from db.evaluations import list_flags
from db.labels import load_evidence
from engine.rank.comparable import ALPHA
from engine.rank.pooled import PooledContext, Source, held_difference, pool


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


@dataclass(frozen=True)
class RunBest:
    """A run's best code by the pooled rule, and how it stands against the run's runner-up."""

    run_id: int
    candidate_id: int  # the run's earliest candidate of that code
    device: str | None
    speedup: float  # the pooled median speedup of its code over the run's evaluations
    speedup_low: float  # 1 - alpha interval of that median
    speedup_high: float
    evaluations: int
    contenders: int  # codes the run measured in this context
    holds: bool  # faster than every other code of the run by a difference that holds
    runner_up_id: int | None = None
    runner_up_speedup: float | None = None
    runner_up_evaluations: int = 0
    ratio_low: float | None = None  # interval of the runner-up's time over the best's
    ratio_high: float | None = None


def _main_context(contexts: Sequence[PooledContext]) -> PooledContext:
    """The context most of the run's evaluations were timed in (a run times one device, one baseline and
    one configuration; a later re-measure elsewhere should not replace what the run found)."""
    return max(contexts, key=lambda c: sum(s.n for s in c.sources))


def _run_best(run_id: int, context: PooledContext, alpha: float) -> RunBest:
    ranked: list[Source] = sorted(context.sources, key=lambda s: (s.centre, s.representative))
    best, runner_up = ranked[0], (ranked[1] if len(ranked) > 1 else None)
    low, high = best.speedup_interval(context.spread.tau, alpha)
    held = held_difference(best, runner_up, context.spread, alpha, 1.0) if runner_up else None
    return RunBest(run_id, best.representative, context.device, best.speedup, low, high, best.n, len(ranked),
                   context.best_holds(alpha), runner_up.representative if runner_up else None,
                   runner_up.speedup if runner_up else None, runner_up.n if runner_up else 0,
                   held.ratio_low if held else None, held.ratio_high if held else None)


def run_contexts(run_ids: Sequence[int]) -> dict[int, PooledContext]:
    """Each run's own codes pooled, in the context most of its evaluations were timed in; a run with no
    correct, admitted, timed candidate has none."""
    members = queries.run_candidate_ids(list(run_ids))
    evidence = load_evidence(candidate_ids=[cid for ids in members.values() for cid in ids], with_source=False)
    by_id = {item.id: item for item in evidence}
    out: dict[int, PooledContext] = {}
    for run_id, ids in members.items():
        contexts = [c for c in pool([by_id[cid] for cid in ids if cid in by_id]) if c.sources]
        if contexts:
            out[run_id] = _main_context(contexts)
    return out


def run_bests(run_ids: Sequence[int], alpha: float = ALPHA) -> dict[int, RunBest]:
    """Each run's best, by run id; a run with no correct, admitted, timed candidate has none.

    Pooled over the run's own candidates: identical code of the run is one source, its centre the median
    of all its evaluations (a re-measure of an outlier counts), judged against the spread between them.
    """
    return {run_id: _run_best(run_id, context, alpha) for run_id, context in run_contexts(run_ids).items()}


def best_by_step(context: PooledContext, step_of: Mapping[int, int]) -> list[tuple[int, float, int]]:
    """(step, pooled speedup, candidate id) of the run's best after each step that tried a code: the
    fastest pooled median among the codes tried up to then, each judged on all its evaluations so far
    (the run page's "best so far" line; its last point is the run's best)."""
    first: list[tuple[int, Source]] = sorted(
        ((min(step_of[cid] for cid in source.ids if cid in step_of), source)
         for source in context.sources if any(cid in step_of for cid in source.ids)),
        key=lambda pair: (pair[0], pair[1].representative))
    out: list[tuple[int, float, int]] = []
    best: Source | None = None
    for step, source in first:
        if best is None or (source.centre, source.representative) < (best.centre, best.representative):
            best = source
        if out and out[-1][0] == step:
            out.pop()
        out.append((step, best.speedup, best.representative))
    return out
