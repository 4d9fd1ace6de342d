"""Streaming reads for exports: plain column tuples in id order, fetched in batches, so a million
candidates pass through without ever being held in memory (ORM objects would be far slower)."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
from sqlalchemy import Text, func, select, type_coerce
from sqlmodel import Session

from db.models import Candidate, Diagnostic, Evaluation, ExportRecord, Run
from db.session import get_engine, session_scope

CANDIDATE_COLUMNS = (
    Candidate.id, Candidate.problem_slug, Candidate.run_id, Candidate.parent_id, Candidate.step, Candidate.depth,
    Candidate.origin, Candidate.strategy, Candidate.language, Candidate.source, Candidate.source_hash,
    Candidate.created_at, Candidate.prompt,
    Evaluation.verdict, Evaluation.message, Evaluation.speedup, Evaluation.candidate_us, Evaluation.baseline_us,
    Evaluation.device, Evaluation.reward, Evaluation.flagged, Evaluation.flag_review, Evaluation.recorded,
    # JSON columns as raw text: orjson decodes them several times faster than the column type would.
    type_coerce(Evaluation.reward_components, Text), type_coerce(Diagnostic.data, Text),
    type_coerce(Evaluation.timing, Text), type_coerce(Candidate.proposal, Text),
)
CANDIDATE_FIELDS = (
    "id", "problem_slug", "run_id", "parent_id", "step", "depth", "origin", "strategy", "language", "source",
    "source_hash", "created_at", "prompt", "eval_verdict", "eval_message", "eval_speedup", "eval_candidate_us",
    "eval_baseline_us", "eval_device", "eval_reward", "eval_flagged", "eval_flag_review", "eval_recorded",
    "eval_reward_components", "static_data", "eval_timing", "proposal",
)
JSON_FIELDS = ("eval_reward_components", "static_data", "eval_timing", "proposal")


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
    with get_engine().connect() as connection:
        result = connection.execution_options(stream_results=True, max_row_buffer=batch).execute(statement)
        for row in result:
            record = dict(zip(CANDIDATE_FIELDS, row, strict=True))
            for name in JSON_FIELDS:
                record[name] = orjson.loads(record[name]) if record[name] else None
            yield record


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


def recent_exports(limit: int = 20) -> list[ExportRecord]:
    """The newest exports, whoever made them (the Export page and `refinery export` both record theirs)."""
    with session_scope() as session:
        rows = session.exec(select(ExportRecord).order_by(ExportRecord.id.desc()).limit(limit)).scalars().all()
        session.expunge_all()
        return list(rows)
