"""Read queries for the dashboard: paginated, filtered on indexed columns, returning small records.

The dashboard shows runs with thousands of candidates, so every list here is either paginated or
carries only the scalar columns a chart needs (never sources or JSON blobs in bulk). Records are
plain frozen dataclasses: they outlive the session that read them and pickle into Streamlit's
cache without dragging ORM state along.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from sqlalchemy import func
from sqlmodel import Session, select

from db.models import Candidate, Diagnostic, Evaluation, Run, RunEvent
from db.session import session_scope
from engine.schema.evaluation import EvaluationTiming

T = TypeVar("T")
TERMINAL_STATUSES = ("stopped", "finished", "failed")


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a longer list, with the total so the UI can say "page 3 of 40"."""

    items: list[T]
    total: int
    page: int
    page_size: int

    @property
    def pages(self) -> int:
        return max(1, math.ceil(self.total / self.page_size))


@dataclass(frozen=True)
class RunFilter:
    """What the Runs page filters on; each field maps to one indexed column. Empty means any."""

    problem_slugs: tuple[str, ...] = ()
    statuses: tuple[str, ...] = ()
    proposers: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    recorded: bool | None = None


@dataclass(frozen=True)
class RunSummary:
    id: int
    problem_slug: str
    proposer: str
    strategy: str
    status: str
    rounds_budget: int
    device: str | None
    folder: str | None
    recorded: bool
    error: str | None
    config: dict[str, Any]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    candidates: int = 0
    correct: int = 0  # candidates whose latest evaluation is correct (its best is engine.rank.best.run_bests)

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True)
class RunOptions:
    """The distinct values present in the run table, for the filter widgets."""

    problem_slugs: list[str]
    statuses: list[str]
    proposers: list[str]
    strategies: list[str]


@dataclass(frozen=True)
class RunProgress:
    """A cheap fingerprint of a run: when it changes, cached views of the run are stale."""

    status: str
    candidates: int
    evaluations: int
    last_event_id: int
    last_step: int | None

    @property
    def version(self) -> tuple:
        return (self.status, self.candidates, self.evaluations, self.last_event_id)


@dataclass(frozen=True)
class RoundRow:
    """One candidate of a run with its latest verdict: the scalars lists and charts need."""

    candidate_id: int
    step: int | None
    sample: int
    parent_id: int | None
    depth: int
    origin: str
    strategy: str | None
    language: str
    created_at: datetime
    verdict: str | None = None
    message: str = ""
    speedup: float | None = None
    candidate_us: float | None = None
    baseline_us: float | None = None
    reward: float | None = None
    flagged: bool = False
    recorded: bool = False


@dataclass(frozen=True)
class EvaluationView:
    id: int
    verdict: str
    message: str
    log: str | None
    configs: list[dict[str, Any]]
    integrity: list[dict[str, Any]]
    timing: EvaluationTiming
    candidate_us: float | None
    baseline_us: float | None
    speedup: float | None
    reward: float | None
    reward_components: dict[str, Any]
    device: str | None
    flagged: bool
    recorded: bool
    flag_review: str | None = None  # cleared | rejected, once a person decided
    flag_reviewer: str | None = None
    flag_review_note: str | None = None


@dataclass(frozen=True)
class DiagnosticView:
    kind: str
    bottleneck: str | None
    data: dict[str, Any]
    text: str | None


@dataclass(frozen=True)
class CandidateDetail:
    """Everything one round's panel shows; the parent's source is here for the diff."""

    id: int
    run_id: int | None
    problem_slug: str
    step: int | None
    sample: int
    parent_id: int | None
    depth: int
    origin: str
    strategy: str | None
    language: str
    source: str
    prompt: str | None
    reply: str | None
    proposal: dict[str, Any]
    tokens_in: int | None
    tokens_out: int | None
    latency_s: float | None
    parent_source: str | None
    evaluation: EvaluationView | None
    diagnostics: dict[str, list[DiagnosticView]] = field(default_factory=dict)

    def diagnostic(self, kind: str) -> DiagnosticView | None:
        """The newest diagnostic of `kind`, if any."""
        found = self.diagnostics.get(kind) or []
        return found[-1] if found else None


@dataclass(frozen=True)
class RooflineRow:
    candidate_id: int
    step: int | None
    verdict: str | None
    data: dict[str, Any]


@dataclass(frozen=True)
class TimingRow:
    """Per-configuration results of a candidate's latest evaluation (for a roofline from the model)."""

    candidate_id: int
    step: int | None
    verdict: str | None
    configs: list[dict[str, Any]]


@dataclass(frozen=True)
class EventRow:
    id: int
    kind: str
    step: int | None
    candidate_id: int | None
    message: str
    created_at: datetime


def _page_bounds(page: int, page_size: int) -> tuple[int, int]:
    page_size = max(1, int(page_size))
    return max(0, int(page)) * page_size, page_size


def _run_filter(statement, flt: RunFilter):
    if flt.problem_slugs:
        statement = statement.where(Run.problem_slug.in_(flt.problem_slugs))
    if flt.statuses:
        statement = statement.where(Run.status.in_(flt.statuses))
    if flt.proposers:
        statement = statement.where(Run.proposer.in_(flt.proposers))
    if flt.strategies:
        statement = statement.where(Run.strategy.in_(flt.strategies))
    if flt.recorded is not None:
        statement = statement.where(Run.recorded == flt.recorded)
    return statement


def _latest_evaluation_ids(run_ids: list[int] | None = None):
    """Subquery: the newest evaluation id per candidate (a re-measure supersedes the first)."""
    statement = select(Evaluation.candidate_id.label("candidate_id"), func.max(Evaluation.id).label("eid"))
    if run_ids is not None:
        statement = statement.join(Candidate, Candidate.id == Evaluation.candidate_id).where(
            Candidate.run_id.in_(run_ids))
    return statement.group_by(Evaluation.candidate_id).subquery()


def _run_stats(session: Session, run_ids: list[int]) -> dict[int, tuple[int, int]]:
    """(candidates, correct) for each run id, in two grouped queries. A run's best is no maximum over
    latest evaluations (one lucky evaluation would crown it): see `engine.rank.best.run_bests`."""
    if not run_ids:
        return {}
    counts = dict(session.exec(
        select(Candidate.run_id, func.count(Candidate.id)).where(Candidate.run_id.in_(run_ids))
        .group_by(Candidate.run_id)).all())
    latest = _latest_evaluation_ids(run_ids)
    graded = dict(session.exec(
        select(Candidate.run_id, func.count(Evaluation.id))
        .join(latest, latest.c.candidate_id == Candidate.id)
        .join(Evaluation, Evaluation.id == latest.c.eid)
        .where(Evaluation.verdict == "correct")
        .group_by(Candidate.run_id)).all())
    return {run_id: (counts.get(run_id, 0), graded.get(run_id, 0)) for run_id in run_ids}


def _summary(run: Run, stats: tuple[int, int] = (0, 0)) -> RunSummary:
    return RunSummary(
        id=run.id, problem_slug=run.problem_slug, proposer=run.proposer, strategy=run.strategy, status=run.status,
        rounds_budget=run.rounds_budget, device=run.device, folder=run.folder, recorded=run.recorded,
        error=run.error, config=dict(run.config or {}), created_at=run.created_at, started_at=run.started_at,
        finished_at=run.finished_at, candidates=stats[0], correct=stats[1],
    )


def list_runs(flt: RunFilter = RunFilter(), page: int = 0, page_size: int = 50, url: str | None = None,
              ) -> Page[RunSummary]:
    """Runs newest first, one page at a time, each with its candidate and correct counts."""
    offset, limit = _page_bounds(page, page_size)
    with session_scope(url) as session:
        total = session.exec(_run_filter(select(func.count(Run.id)), flt)).one()
        runs = session.exec(_run_filter(select(Run), flt).order_by(Run.created_at.desc(), Run.id.desc())
                            .offset(offset).limit(limit)).all()
        stats = _run_stats(session, [r.id for r in runs])
        items = [_summary(r, stats.get(r.id, (0, 0))) for r in runs]
    return Page(items=items, total=total, page=max(0, page), page_size=limit)


def run_options(url: str | None = None) -> RunOptions:
    with session_scope(url) as session:
        def distinct(column) -> list[str]:
            return sorted(v for v in session.exec(select(column).distinct()).all() if v is not None)

        return RunOptions(distinct(Run.problem_slug), distinct(Run.status), distinct(Run.proposer),
                          distinct(Run.strategy))


def get_run(run_id: int, url: str | None = None) -> RunSummary | None:
    with session_scope(url) as session:
        run = session.get(Run, run_id)
        if run is None:
            return None
        return _summary(run, _run_stats(session, [run_id]).get(run_id, (0, 0)))


def recent_runs(limit: int = 50, url: str | None = None) -> list[RunSummary]:
    """The newest runs without per-run statistics: enough for a picker."""
    with session_scope(url) as session:
        runs = session.exec(select(Run).order_by(Run.created_at.desc(), Run.id.desc()).limit(limit)).all()
        return [_summary(r) for r in runs]


def run_statuses(run_ids: list[int], url: str | None = None) -> dict[int, str]:
    """The status of each run named, now: one indexed read, cheap enough to ask every few seconds."""
    if not run_ids:
        return {}
    with session_scope(url) as session:
        return dict(session.exec(select(Run.id, Run.status).where(Run.id.in_(run_ids))).all())


def run_progress(run_id: int, url: str | None = None) -> RunProgress | None:
    with session_scope(url) as session:
        run = session.get(Run, run_id)
        if run is None:
            return None
        candidates, last_step = session.exec(
            select(func.count(Candidate.id), func.max(Candidate.step)).where(Candidate.run_id == run_id)).one()
        evaluations = session.exec(
            select(func.count(Evaluation.id)).join(Candidate, Candidate.id == Evaluation.candidate_id)
            .where(Candidate.run_id == run_id)).one()
        last_event = session.exec(select(func.max(RunEvent.id)).where(RunEvent.run_id == run_id)).one()
        return RunProgress(status=run.status, candidates=candidates, evaluations=evaluations,
                           last_event_id=last_event or 0, last_step=last_step)


def _round_statement(run_id: int):
    latest = _latest_evaluation_ids([run_id])
    return (
        select(Candidate.id, Candidate.step, Candidate.sample, Candidate.parent_id, Candidate.depth,
               Candidate.origin, Candidate.strategy, Candidate.language, Candidate.created_at,
               Evaluation.verdict, Evaluation.message, Evaluation.speedup, Evaluation.candidate_us,
               Evaluation.baseline_us, Evaluation.reward, Evaluation.flagged, Evaluation.recorded)
        .outerjoin(latest, latest.c.candidate_id == Candidate.id)
        .outerjoin(Evaluation, Evaluation.id == latest.c.eid)
        .where(Candidate.run_id == run_id)
    )


def _round(row) -> RoundRow:
    return RoundRow(candidate_id=row[0], step=row[1], sample=row[2], parent_id=row[3], depth=row[4], origin=row[5],
                    strategy=row[6], language=row[7], created_at=row[8], verdict=row[9], message=row[10] or "",
                    speedup=row[11], candidate_us=row[12], baseline_us=row[13], reward=row[14],
                    flagged=bool(row[15]), recorded=bool(row[16]))


def run_rounds(run_id: int, page: int = 0, page_size: int = 20, newest_first: bool = True,
               url: str | None = None) -> Page[RoundRow]:
    """A run's candidates with their latest verdicts, one page at a time (newest first by default)."""
    offset, limit = _page_bounds(page, page_size)
    order = (Candidate.id.desc(),) if newest_first else (Candidate.id.asc(),)
    with session_scope(url) as session:
        total = session.exec(select(func.count(Candidate.id)).where(Candidate.run_id == run_id)).one()
        rows = session.exec(_round_statement(run_id).order_by(*order).offset(offset).limit(limit)).all()
    return Page(items=[_round(r) for r in rows], total=total, page=max(0, page), page_size=limit)


def run_points(run_id: int, url: str | None = None) -> list[RoundRow]:
    """Every candidate of a run, scalars only, in creation order: what the charts plot."""
    with session_scope(url) as session:
        rows = session.exec(_round_statement(run_id).order_by(Candidate.id.asc())).all()
    return [_round(r) for r in rows]


def run_roofline(run_id: int, limit: int = 20_000, url: str | None = None) -> list[RooflineRow]:
    """The newest roofline diagnostic of each candidate of a run, with its verdict."""
    latest_eval = _latest_evaluation_ids([run_id])
    latest_diag = (
        select(Diagnostic.candidate_id.label("candidate_id"), func.max(Diagnostic.id).label("did"))
        .join(Candidate, Candidate.id == Diagnostic.candidate_id)
        .where(Candidate.run_id == run_id, Diagnostic.kind == "roofline")
        .group_by(Diagnostic.candidate_id).subquery()
    )
    with session_scope(url) as session:
        rows = session.exec(
            select(Candidate.id, Candidate.step, Evaluation.verdict, Diagnostic.data)
            .join(latest_diag, latest_diag.c.candidate_id == Candidate.id)
            .join(Diagnostic, Diagnostic.id == latest_diag.c.did)
            .outerjoin(latest_eval, latest_eval.c.candidate_id == Candidate.id)
            .outerjoin(Evaluation, Evaluation.id == latest_eval.c.eid)
            .order_by(Candidate.id.asc()).limit(limit)).all()
    return [RooflineRow(candidate_id=r[0], step=r[1], verdict=r[2], data=dict(r[3] or {})) for r in rows]


def run_timings(run_id: int, limit: int = 20_000, url: str | None = None) -> list[TimingRow]:
    """Per-configuration results of the run's correct candidates, which are the timed ones."""
    latest = _latest_evaluation_ids([run_id])
    with session_scope(url) as session:
        rows = session.exec(
            select(Candidate.id, Candidate.step, Evaluation.verdict, Evaluation.configs)
            .join(latest, latest.c.candidate_id == Candidate.id)
            .join(Evaluation, Evaluation.id == latest.c.eid)
            .where(Candidate.run_id == run_id, Evaluation.verdict == "correct")
            .order_by(Candidate.id.asc()).limit(limit)).all()
    return [TimingRow(candidate_id=r[0], step=r[1], verdict=r[2], configs=list(r[3] or [])) for r in rows]


def _evaluation_view(ev: Evaluation) -> EvaluationView:
    return EvaluationView(
        id=ev.id, verdict=ev.verdict, message=ev.message or "", log=ev.log, configs=list(ev.configs or []),
        integrity=list(ev.integrity or []), timing=EvaluationTiming.from_stored(ev.timing),
        candidate_us=ev.candidate_us, baseline_us=ev.baseline_us, speedup=ev.speedup, reward=ev.reward,
        reward_components=dict(ev.reward_components or {}), device=ev.device, flagged=ev.flagged,
        recorded=ev.recorded, flag_review=ev.flag_review, flag_reviewer=ev.flag_reviewer,
        flag_review_note=ev.flag_review_note,
    )


def get_evaluation(evaluation_id: int, url: str | None = None) -> EvaluationView | None:
    """One evaluation by id (a flag names its evaluation, which need not be the candidate's newest)."""
    with session_scope(url) as session:
        ev = session.get(Evaluation, evaluation_id)
        return _evaluation_view(ev) if ev else None


def candidate_detail(candidate_id: int, url: str | None = None) -> CandidateDetail | None:
    """One candidate with its newest evaluation, its diagnostics by kind, and its parent's source."""
    with session_scope(url) as session:
        cand = session.get(Candidate, candidate_id)
        if cand is None:
            return None
        parent = session.get(Candidate, cand.parent_id) if cand.parent_id else None
        ev = session.exec(select(Evaluation).where(Evaluation.candidate_id == candidate_id)
                          .order_by(Evaluation.id.desc()).limit(1)).first()
        diagnostics: dict[str, list[DiagnosticView]] = {}
        for diag in session.exec(select(Diagnostic).where(Diagnostic.candidate_id == candidate_id)
                                 .order_by(Diagnostic.id.asc())).all():
            diagnostics.setdefault(diag.kind, []).append(
                DiagnosticView(kind=diag.kind, bottleneck=diag.bottleneck, data=dict(diag.data or {}), text=diag.text))
        return CandidateDetail(
            id=cand.id, run_id=cand.run_id, problem_slug=cand.problem_slug, step=cand.step, sample=cand.sample,
            parent_id=cand.parent_id, depth=cand.depth, origin=cand.origin, strategy=cand.strategy,
            language=cand.language, source=cand.source, prompt=cand.prompt, reply=cand.reply,
            proposal=dict(cand.proposal or {}), tokens_in=cand.tokens_in, tokens_out=cand.tokens_out,
            latency_s=cand.latency_s, parent_source=parent.source if parent else None,
            evaluation=_evaluation_view(ev) if ev else None, diagnostics=diagnostics,
        )


def run_events(run_id: int, limit: int = 50, url: str | None = None) -> list[EventRow]:
    """The newest events of a run, newest first."""
    with session_scope(url) as session:
        rows = session.exec(select(RunEvent).where(RunEvent.run_id == run_id)
                            .order_by(RunEvent.id.desc()).limit(limit)).all()
        return [EventRow(id=e.id, kind=e.kind, step=e.step, candidate_id=e.candidate_id, message=e.message,
                         created_at=e.created_at) for e in rows]


def candidate_runs(candidate_ids: list[int], url: str | None = None) -> dict[int, tuple[int | None, bool]]:
    """Each candidate's run id and whether it was recorded (its evaluation or its run), by candidate id."""
    if not candidate_ids:
        return {}
    with session_scope(url) as session:
        rows = session.exec(select(Candidate.id, Candidate.run_id, Run.recorded)
                            .outerjoin(Run, Run.id == Candidate.run_id)
                            .where(Candidate.id.in_(candidate_ids))).all()
        recorded_evaluations = set(session.exec(select(Evaluation.candidate_id).where(
            Evaluation.candidate_id.in_(candidate_ids), Evaluation.recorded)).all())
    return {cid: (run_id, bool(recorded) or cid in recorded_evaluations) for cid, run_id, recorded in rows}


def run_candidate_ids(run_ids: Sequence[int], url: str | None = None) -> dict[int, list[int]]:
    """Each run's candidate ids, oldest first (every run asked for is a key, an empty run too)."""
    out: dict[int, list[int]] = {run_id: [] for run_id in run_ids}
    if not out:
        return out
    with session_scope(url) as session:
        for run_id, cid in session.exec(select(Candidate.run_id, Candidate.id)
                                        .where(Candidate.run_id.in_(list(out))).order_by(Candidate.id)):
            out[run_id].append(cid)
    return out


def run_counts(url: str | None = None) -> dict[str, int]:
    """How many runs each problem has had."""
    with session_scope(url) as session:
        return dict(session.exec(select(Run.problem_slug, func.count(Run.id)).group_by(Run.problem_slug)).all())


def count_runs(url: str | None = None) -> int:
    with session_scope(url) as session:
        return session.exec(select(func.count(Run.id))).one()


def count_recorded_runs(url: str | None = None) -> int:
    with session_scope(url) as session:
        return session.exec(select(func.count(Run.id)).where(Run.recorded)).one()
