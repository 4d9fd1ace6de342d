"""Evaluation rows that need no engine type: the source hash a candidate row carries, and flags (a
person's review of an implausible speedup).

The mapping between the engine's `EvaluationResult` and the `evaluation` row lives in
`engine.store.evaluation`, beside the records (db imports nothing from the engine).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlmodel import select

from db.models import Candidate, Evaluation
from db.session import session_scope
from engine.schema.evaluation import EvaluationTiming


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


# Flags: a person's review of an implausible speedup ------------------------------------------------

REVIEW_DECISIONS = ("cleared", "rejected")


def admitted(flagged: bool, review: str | None) -> bool:
    """Whether an evaluation may enter datasets and rankers: not flagged, or flagged and cleared by a person."""
    return not flagged or review == "cleared"


@dataclass(frozen=True)
class FlagRow:
    evaluation_id: int
    candidate_id: int
    problem_slug: str
    run_id: int | None
    speedup: float | None
    device: str | None
    reason: str
    reward: float | None
    components: dict
    review: str | None
    reviewer: str | None
    reviewed_at: datetime | None
    note: str | None
    created_at: datetime


def _flag_row(ev: Evaluation, candidate: Candidate) -> FlagRow:
    return FlagRow(ev.id, candidate.id, candidate.problem_slug, candidate.run_id, ev.speedup, ev.device,
                   EvaluationTiming.from_stored(ev.timing).flag_reason, ev.reward, dict(ev.reward_components or {}),
                   ev.flag_review, ev.flag_reviewer, ev.flag_reviewed_at, ev.flag_review_note, ev.created_at)


def list_flags(*, awaiting_only: bool = True, run_id: int | None = None, limit: int = 500) -> list[FlagRow]:
    """Flagged evaluations, newest first; by default only those no person has reviewed yet."""
    with session_scope() as session:
        statement = (select(Evaluation, Candidate).join(Candidate, Candidate.id == Evaluation.candidate_id)
                     .where(Evaluation.flagged == True))  # noqa: E712 - SQL comparison
        if awaiting_only:
            statement = statement.where(Evaluation.flag_review == None)  # noqa: E711 - SQL comparison
        if run_id is not None:
            statement = statement.where(Candidate.run_id == run_id)
        rows = session.exec(statement.order_by(Evaluation.id.desc()).limit(limit)).all()
        return [_flag_row(ev, candidate) for ev, candidate in rows]


def get_flag(evaluation_id: int) -> FlagRow | None:
    with session_scope() as session:
        row = session.exec(select(Evaluation, Candidate).join(Candidate, Candidate.id == Evaluation.candidate_id)
                           .where(Evaluation.id == evaluation_id)).first()
        return None if row is None or not row[0].flagged else _flag_row(*row)


def apply_flag_review(evaluation_id: int, decision: str, reviewer: str, note: str, reward: float,
                      components: dict) -> FlagRow:
    """Store a person's decision on a flagged evaluation with the reward it implies; once only."""
    if decision not in REVIEW_DECISIONS:
        raise ValueError(f"a review is one of {REVIEW_DECISIONS}, not {decision!r}")
    if not reviewer.strip():
        raise ValueError("a review needs the reviewer's name")
    with session_scope() as session:
        row = session.exec(select(Evaluation, Candidate).join(Candidate, Candidate.id == Evaluation.candidate_id)
                           .where(Evaluation.id == evaluation_id).with_for_update()).first()
        if row is None or not row[0].flagged:
            raise ValueError(f"evaluation {evaluation_id} is not flagged")
        ev, candidate = row
        if ev.flag_review is not None:
            raise ValueError(f"evaluation {evaluation_id} was already {ev.flag_review} by {ev.flag_reviewer}")
        ev.flag_review, ev.flag_reviewer, ev.flag_reviewed_at = decision, reviewer.strip(), datetime.now(UTC)
        ev.flag_review_note, ev.reward, ev.reward_components = note.strip() or None, reward, dict(components)
        session.add(ev)
        session.flush()
        return _flag_row(ev, candidate)
