"""Reads and writes of a run's rows: the run, its steps (candidates + evaluations + diagnostics) and
its controls and events. A step is stored in one transaction, so a run killed mid-step loses only
that unfinished step and never stores half of one; the unique (run, step, sample) key refuses a
duplicate if a resumed run ever tried to store a step twice."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import func
from sqlmodel import col, select

from db.models import Candidate, Diagnostic, Evaluation, Run, RunControl, RunEvent, utcnow
from db.session import session_scope


@dataclass
class StoredStep:
    """One candidate of a step with everything measured about it, ready to insert."""

    candidate: Candidate
    evaluation: Evaluation
    diagnostics: list[Diagnostic] = field(default_factory=list)


@dataclass(frozen=True)
class TreeRow:
    candidate: Candidate
    evaluation: Evaluation | None
    feedback: Diagnostic | None


def create_run(run: Run) -> Run:
    with session_scope() as session:
        session.add(run)
        session.flush()
        session.refresh(run)
    return run


def get_run(run_id: int) -> Run | None:
    with session_scope() as session:
        return session.get(Run, run_id)


def update_run(run_id: int, **fields) -> Run:
    with session_scope() as session:
        run = session.get(Run, run_id)
        for key, value in fields.items():
            setattr(run, key, value)
        session.add(run)
    return run


LIVE_STATUSES = ("queued", "running", "paused")


def silent_runs(stale_before: datetime, queued_before: datetime) -> list[Run]:
    """Runs that say they are live but whose process has given no sign of life since `stale_before` (or, never
    having started, were queued before `queued_before`)."""
    with session_scope() as session:
        live = session.exec(select(Run).where(col(Run.status).in_(LIVE_STATUSES))).all()
    found = []
    for run in live:
        last = run.heartbeat_at or run.started_at
        if last is None:
            if _naive(run.created_at) < _naive(queued_before):
                found.append(run)
        elif _naive(last) < _naive(stale_before):
            found.append(run)
    return found


def _naive(moment: datetime) -> datetime:
    return moment.replace(tzinfo=None)


def end_run(run_id: int, status: str, message: str, only_if: tuple[str, ...] = LIVE_STATUSES) -> RunEvent | None:
    """Set a final status with its event in one transaction, unless the run already left `only_if` (its
    process finished it meanwhile); the event, or None when nothing changed."""
    with session_scope() as session:
        run = session.get(Run, run_id)
        if run is None or run.status not in only_if:
            return None
        run.status, run.finished_at = status, utcnow()
        run.error = message if status == "failed" else run.error
        session.add(run)
        event = RunEvent(run_id=run_id, kind=status, message=message)
        session.add(event)
        session.flush()
        session.refresh(event)
        return event


def list_runs(limit: int = 50) -> list[Run]:
    with session_scope() as session:
        return list(session.exec(select(Run).order_by(col(Run.id).desc()).limit(limit)))


def steps_done(run_ids: list[int]) -> dict[int, int]:
    """Run id → steps stored (the last step + 1, as the dashboard counts rounds); runs with none are left out."""
    if not run_ids:
        return {}
    with session_scope() as session:
        rows = session.exec(select(Candidate.run_id, func.max(Candidate.step)).where(col(Candidate.run_id).in_(run_ids))
                            .group_by(Candidate.run_id)).all()
        return {run_id: last + 1 for run_id, last in rows if last is not None}


def tree_rows(run_id: int) -> list[TreeRow]:
    """Every candidate of the run with its evaluation and the feedback sent onwards, in step order."""
    with session_scope() as session:
        candidates = session.exec(select(Candidate).where(Candidate.run_id == run_id)
                                  .order_by(Candidate.step, Candidate.sample)).all()
        in_run = select(Candidate.id).where(Candidate.run_id == run_id)
        evaluations = {e.candidate_id: e for e in session.exec(
            select(Evaluation).where(col(Evaluation.candidate_id).in_(in_run)).order_by(Evaluation.id))}
        feedback = {d.candidate_id: d for d in session.exec(
            select(Diagnostic).where(col(Diagnostic.candidate_id).in_(in_run), Diagnostic.kind == "feedback"))}
        return [TreeRow(c, evaluations.get(c.id), feedback.get(c.id)) for c in candidates]


def candidate_with_evaluation(candidate_id: int) -> TreeRow | None:
    with session_scope() as session:
        candidate = session.get(Candidate, candidate_id)
        if candidate is None:
            return None
        evaluation = session.exec(select(Evaluation).where(Evaluation.candidate_id == candidate_id)
                                  .order_by(col(Evaluation.id).desc())).first()
        feedback = session.exec(select(Diagnostic).where(Diagnostic.candidate_id == candidate_id,
                                                         Diagnostic.kind == "feedback")).first()
        return TreeRow(candidate, evaluation, feedback)


def store_step(run_id: int, step: int, items: list[StoredStep]) -> list[RunEvent]:
    """Insert a whole step and its round events atomically; returns the events to publish."""
    events = []
    with session_scope() as session:
        for sample, item in enumerate(items):
            item.candidate.run_id, item.candidate.step, item.candidate.sample = run_id, step, sample
            session.add(item.candidate)
            session.flush()
            item.evaluation.candidate_id = item.candidate.id
            session.add(item.evaluation)
            for diagnostic in item.diagnostics:
                diagnostic.candidate_id = item.candidate.id
                session.add(diagnostic)
            speed = f", {item.evaluation.speedup:.2f}×" if item.evaluation.speedup else ""
            event = RunEvent(run_id=run_id, kind="round", step=step, candidate_id=item.candidate.id,
                             message=f"step {step}.{sample}: {item.evaluation.verdict}{speed}")
            session.add(event)
            events.append(event)
        session.flush()
        for event in events:
            session.refresh(event)
    return events


def add_event(run_id: int, kind: str, message: str = "", step: int | None = None) -> RunEvent:
    with session_scope() as session:
        event = RunEvent(run_id=run_id, kind=kind, message=message, step=step)
        session.add(event)
        session.flush()
        session.refresh(event)
    return event


def events(run_id: int) -> list[RunEvent]:
    with session_scope() as session:
        return list(session.exec(select(RunEvent).where(RunEvent.run_id == run_id).order_by(RunEvent.id)))


def add_control(run_id: int, action: str, payload: dict | None = None) -> RunControl:
    with session_scope() as session:
        control = RunControl(run_id=run_id, action=action, payload=payload or {})
        session.add(control)
        session.flush()
        session.refresh(control)
    return control


def take_controls(run_id: int) -> list[RunControl]:
    """Unconsumed controls in the order they were sent, marked consumed as they are handed out."""
    with session_scope() as session:
        controls = list(session.exec(select(RunControl).where(RunControl.run_id == run_id,
                                                              col(RunControl.consumed_at).is_(None))
                                     .order_by(RunControl.id)))
        for control in controls:
            control.consumed_at = utcnow()
            session.add(control)
    return controls
