"""Runs as recordings: each run of a database with its candidates, evaluations and diagnostics as one
JSON-ready record, and such records added to another database (`engine.store.recorded` reads and writes
the files). Ids are re-mapped on load, so a recording loads next to a database's own runs; every row
it adds is marked `recorded`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from sqlmodel import Session, select

from db.models import Candidate, Diagnostic, Evaluation, Run
from db.session import get_engine, session_scope

_SKIP = {"id", "candidate_id", "run_id", "parent_id"}
HoldSpeed = Callable[[float | None, dict | None], tuple[float | None, dict]]  # (reward, components) once held


def _plain(row) -> dict:
    return {k: v for k, v in row.model_dump(mode="json").items() if k not in _SKIP}


def run_records(database_url: str, run_ids: list[int] | None = None) -> Iterator[dict]:
    """The runs of `database_url` (all, or `run_ids`), one record each, oldest first."""
    with Session(get_engine(database_url)) as session:
        for run in session.exec(select(Run).order_by(Run.id)).all():
            if run_ids and run.id not in run_ids:
                continue
            candidates = session.exec(select(Candidate).where(Candidate.run_id == run.id).order_by(Candidate.id)).all()
            ids = [c.id for c in candidates]
            evaluations = session.exec(select(Evaluation).where(Evaluation.candidate_id.in_(ids))).all()
            diagnostics = session.exec(select(Diagnostic).where(Diagnostic.candidate_id.in_(ids))).all()
            yield {"run": _plain(run), "candidates": [
                {**_plain(c), "key": c.id, "parent_key": c.parent_id,
                 "evaluations": [_plain(e) for e in evaluations if e.candidate_id == c.id],
                 "diagnostics": [_plain(d) for d in diagnostics if d.candidate_id == c.id]}
                for c in candidates]}


def _hold(row: Evaluation, hold_speed: HoldSpeed) -> None:
    """A recorded flagged result awaiting review was scored before a flag held its speed term: hold it now."""
    if row.flagged and row.flag_review is None and row.reward is not None:
        row.reward, row.reward_components = hold_speed(row.reward, row.reward_components)


def _add(session: Session, record: dict, hold_speed: HoldSpeed) -> None:
    run = Run.model_validate({**record["run"], "recorded": True, "status": record["run"]["status"],
                              "pid": None, "folder": None})
    session.add(run)
    session.flush()
    new_ids: dict[int, int] = {}
    for item in record["candidates"]:
        fields = {k: v for k, v in item.items() if k not in ("key", "parent_key", "evaluations", "diagnostics")}
        candidate = Candidate.model_validate({**fields, "run_id": run.id, "parent_id": new_ids.get(item["parent_key"])})
        session.add(candidate)
        session.flush()
        new_ids[item["key"]] = candidate.id
        for evaluation in item["evaluations"]:
            row = Evaluation.model_validate({**evaluation, "candidate_id": candidate.id, "recorded": True})
            _hold(row, hold_speed)
            session.add(row)
        for diagnostic in item["diagnostics"]:
            session.add(Diagnostic.model_validate({**diagnostic, "candidate_id": candidate.id}))


def add_records(records: Iterable[dict], hold_speed: HoldSpeed) -> int:
    """Add every record not added yet (by problem and creation time); returns how many. Recorded flagged
    results added earlier get their speed term held too."""
    added = 0
    with session_scope() as session:
        for row in session.exec(select(Evaluation).where(Evaluation.recorded == True,  # noqa: E712 - SQL
                                                         Evaluation.flagged == True,  # noqa: E712
                                                         Evaluation.flag_review == None)):  # noqa: E711
            _hold(row, hold_speed)
        present = {(r.problem_slug, r.created_at.isoformat()) for r in
                   session.exec(select(Run).where(Run.recorded == True))}  # noqa: E712 - SQL comparison
        for record in records:
            run = Run.model_validate(record["run"])
            if (run.problem_slug, run.created_at.isoformat()) in present:
                continue
            _add(session, record, hold_speed)
            added += 1
    return added
