"""Recorded runs: real GPU runs shipped under assets/recorded, so a machine with no GPU can label,
rank and export real measurements at once. Every loaded row is marked `recorded`.

A recording is JSONL, one run per line with its candidates, evaluations and diagnostics; ids are
re-mapped on load, so recordings load into any database next to its own runs.
"""

from __future__ import annotations

import json
from pathlib import Path

from sqlmodel import Session, select

from db.models import Candidate, Diagnostic, Evaluation, Run
from db.session import get_engine, session_scope
from engine.problems.library import ASSETS_DIR
from engine.reward import counted_reward

RECORDED_DIR = ASSETS_DIR / "recorded"
_SKIP = {"id", "candidate_id", "run_id", "parent_id"}


def _plain(row) -> dict:
    return {k: v for k, v in row.model_dump(mode="json").items() if k not in _SKIP}


def save_recording(database_url: str, out: Path, run_ids: list[int] | None = None) -> int:
    """Write the runs of `database_url` (all, or `run_ids`) to a recording; returns how many."""
    count = 0
    with Session(get_engine(database_url)) as session, Path(out).open("w") as handle:
        runs = session.exec(select(Run).order_by(Run.id)).all()
        for run in runs:
            if run_ids and run.id not in run_ids:
                continue
            candidates = session.exec(select(Candidate).where(Candidate.run_id == run.id).order_by(Candidate.id)).all()
            ids = [c.id for c in candidates]
            evaluations = session.exec(select(Evaluation).where(Evaluation.candidate_id.in_(ids))).all()
            diagnostics = session.exec(select(Diagnostic).where(Diagnostic.candidate_id.in_(ids))).all()
            record = {"run": _plain(run), "candidates": [
                {**_plain(c), "key": c.id, "parent_key": c.parent_id,
                 "evaluations": [_plain(e) for e in evaluations if e.candidate_id == c.id],
                 "diagnostics": [_plain(d) for d in diagnostics if d.candidate_id == c.id]}
                for c in candidates]}
            handle.write(json.dumps(record) + "\n")
            count += 1
    return count


def _load_line(session: Session, record: dict) -> None:
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
            _hold_speed_of_open_flag(row)
            session.add(row)
        for diagnostic in item["diagnostics"]:
            session.add(Diagnostic.model_validate({**diagnostic, "candidate_id": candidate.id}))


def _hold_speed_of_open_flag(row: Evaluation) -> None:
    """A recorded flagged result awaiting review was scored before a flag held its speed term: hold it now
    (`engine.reward.held_for_review`), so its stored reward is the one that counts."""
    if row.flagged and row.flag_review is None and row.reward is not None:
        row.reward, row.reward_components = counted_reward(row.reward, row.reward_components, True, None)


def load_recorded(folder: Path | None = None) -> int:
    """Load every shipped recording not loaded yet (by problem and creation time); returns runs loaded.
    Recorded flagged results loaded earlier get their speed term held too."""
    folder = Path(folder or RECORDED_DIR)
    loaded = 0
    with session_scope() as session:
        for row in session.exec(select(Evaluation).where(Evaluation.recorded == True,  # noqa: E712 - SQL
                                                         Evaluation.flagged == True,  # noqa: E712
                                                         Evaluation.flag_review == None)):  # noqa: E711
            _hold_speed_of_open_flag(row)
        present = {(r.problem_slug, r.created_at.isoformat()) for r in
                   session.exec(select(Run).where(Run.recorded == True))}  # noqa: E712 - SQL comparison
        for path in sorted(folder.glob("*.jsonl")):
            for line in path.read_text().splitlines():
                record = json.loads(line)
                run = Run.model_validate(record["run"])
                if (run.problem_slug, run.created_at.isoformat()) in present:
                    continue
                _load_line(session, record)
                loaded += 1
    return loaded
