"""Streaming reads for exports: plain column tuples in id order, fetched in batches, so a million
candidates pass through without ever being held in memory (ORM objects would be far slower)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import func, select
from sqlmodel import Session

from db.models import Candidate, Diagnostic, Evaluation, Run
from db.session import get_engine

CANDIDATE_COLUMNS = (
    Candidate.id, Candidate.problem_slug, Candidate.run_id, Candidate.parent_id, Candidate.step, Candidate.depth,
    Candidate.origin, Candidate.strategy, Candidate.language, Candidate.source, Candidate.created_at,
    Evaluation.verdict, Evaluation.message, Evaluation.speedup, Evaluation.candidate_us, Evaluation.baseline_us,
    Evaluation.device, Evaluation.reward, Evaluation.reward_components, Evaluation.flagged, Evaluation.recorded,
    Diagnostic.data,
)
CANDIDATE_FIELDS = tuple(
    ("static_data" if c is Diagnostic.data else c.key if c.class_ is Candidate else f"eval_{c.key}")
    for c in CANDIDATE_COLUMNS)


def iter_candidates(problems: tuple[str, ...] = (), batch: int = 5000) -> Iterator[dict]:
    """Each candidate with its latest evaluation and latest static diagnostic, as a flat dict."""
    latest_eval = (select(Evaluation.candidate_id, func.max(Evaluation.id).label("eid"))
                   .group_by(Evaluation.candidate_id).subquery())
    latest_static = (select(Diagnostic.candidate_id, func.max(Diagnostic.id).label("did"))
                     .where(Diagnostic.kind == "static").group_by(Diagnostic.candidate_id).subquery())
    statement = (select(*CANDIDATE_COLUMNS)
                 .outerjoin(latest_eval, latest_eval.c.candidate_id == Candidate.id)
                 .outerjoin(Evaluation, Evaluation.id == latest_eval.c.eid)
                 .outerjoin(latest_static, latest_static.c.candidate_id == Candidate.id)
                 .outerjoin(Diagnostic, Diagnostic.id == latest_static.c.did)
                 .order_by(Candidate.id))
    if problems:
        statement = statement.where(Candidate.problem_slug.in_(problems))
    with Session(get_engine()) as session:
        for row in session.execute(statement.execution_options(yield_per=batch)):
            yield dict(zip(CANDIDATE_FIELDS, row, strict=True))


def run_ids(problems: tuple[str, ...] = ()) -> list[int]:
    statement = select(Run.id).order_by(Run.id)
    if problems:
        statement = statement.where(Run.problem_slug.in_(problems))
    with Session(get_engine()) as session:
        return list(session.execute(statement).scalars())


def problem_slugs_with_candidates() -> list[str]:
    with Session(get_engine()) as session:
        return list(session.execute(select(Candidate.problem_slug).distinct().order_by(Candidate.problem_slug))
                    .scalars())


def latest_rewards(problem_slug: str) -> dict[int, tuple[float | None, dict | None]]:
    """Reward and components of each candidate's latest evaluation, for one problem."""
    latest = (select(func.max(Evaluation.id)).join(Candidate, Candidate.id == Evaluation.candidate_id)
              .where(Candidate.problem_slug == problem_slug).group_by(Evaluation.candidate_id))
    statement = select(Evaluation.candidate_id, Evaluation.reward, Evaluation.reward_components).where(
        Evaluation.id.in_(latest))
    with Session(get_engine()) as session:
        return {cid: (reward, components) for cid, reward, components in session.execute(statement)}
