"""Reads and writes for pair labeling and the ranker: labelers, sessions, votes, the evidence shown
beside each candidate, and the registry of trained ranker versions.

Every write is one short transaction that starts with its write (an INSERT or a single UPDATE), so
two labelers voting at once never read a stale snapshot and then write: SQLite (WAL, busy timeout)
queues the second writer, PostgreSQL runs both, and no vote is lost. Reads return frozen records,
never ORM objects, so callers cannot trip over expired attributes after the session closes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import func, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import col, select

from db.evaluations import admitted
from db.identity import equivalence_of
from db.models import Candidate, Diagnostic, Evaluation, Labeler, LabelSession, PairLabel, RankerModel, utcnow
from db.session import session_scope
from engine.schema.evaluation import EvaluationTiming, stored_configs

T = TypeVar("T")
_CHUNK = 500  # ids per IN (...) clause, well under SQLite's variable limit


@dataclass(frozen=True)
class LabelerRow:
    id: int
    name: str


@dataclass(frozen=True)
class SessionRow:
    id: int
    labeler_id: int
    queue: str
    blind: bool
    problem_slug: str | None
    started_at: datetime
    ended_at: datetime | None


@dataclass(frozen=True)
class LabelRow:
    """One vote as cast: `candidate_a_id` is the candidate shown on the left."""

    id: int
    candidate_a_id: int
    candidate_b_id: int
    labeler_id: int
    session_id: int | None
    choice: str
    tags: tuple[str, ...]
    note: str
    blind: bool
    undone: bool
    created_at: datetime


@dataclass(frozen=True)
class Measurement:
    """The latest correct, admitted timing of a candidate on one device: its median, what it was measured
    against (the baseline, the timed configuration) and the trials themselves where they were kept."""

    device: str
    candidate_us: float | None
    speedup: float | None
    baseline: str | None = None
    config: str | None = None
    baseline_us: float | None = None
    samples_us: tuple[float, ...] = ()
    iqr_us: float | None = None
    trials: int | None = None
    # One entry per correct, admitted evaluation of this candidate in this context (device, baseline,
    # configuration), oldest first: its median over its own run's baseline median (the median alone where
    # no baseline was timed). Repeated evaluations are what tell a real difference from a noisy run.
    levels: tuple[float, ...] = ()

    @property
    def evaluation_levels(self) -> tuple[float, ...]:
        """`levels`, or this measurement's own level where no list was kept (records built by hand)."""
        if self.levels:
            return self.levels
        own = evaluation_level(self.candidate_us, self.baseline_us, self.speedup)
        return (own,) if own else ()


def evaluation_level(candidate_us: float | None, baseline_us: float | None, speedup: float | None) -> float | None:
    """What evaluations are compared on: time over the run's own baseline (a machine slower for one run
    slows both sides), the inverse speedup where no times were kept, the time alone where neither was."""
    if candidate_us and baseline_us:
        return candidate_us / baseline_us
    if speedup:
        return 1.0 / speedup
    return candidate_us or None


@dataclass(frozen=True)
class CandidateEvidence:
    """What a labeler sees and what the ranker learns from, for one candidate."""

    id: int
    problem_slug: str
    language: str
    origin: str
    strategy: str | None
    source: str
    source_hash: str
    created_at: datetime
    verdict: str | None = None  # of the latest evaluation
    message: str = ""
    speedup: float | None = None
    candidate_us: float | None = None
    device: str | None = None
    flagged: bool = False  # held: its latest evaluation is flagged and no person has cleared it
    integrity_violation: bool = False  # any evaluation caught it cheating
    features: dict[str, Any] = field(default_factory=dict)  # latest static diagnostic's data["features"]
    bottleneck: str | None = None
    measurements: tuple[Measurement, ...] = ()
    equivalence: str = ""  # equal for sources equal but for comments and whitespace (db.identity)
    prompt: str | None = None  # the prompt the model was sent for it (LLM candidates; with the source)


@dataclass(frozen=True)
class RankerModelRow:
    id: int
    version: int
    path: str
    feature_names: tuple[str, ...]
    data: dict[str, Any]
    metrics: dict[str, Any]
    created_at: datetime

    @property
    def ready(self) -> bool:
        return bool(self.data.get("ready"))


def _retry_locked(fn: Callable[[], T], attempts: int = 5) -> T:
    """Run `fn`, retrying when SQLite reports a lock that outlived its busy timeout."""
    for attempt in range(attempts):
        try:
            return fn()
        except OperationalError as exc:
            text = str(exc).lower()
            if attempt == attempts - 1 or ("locked" not in text and "busy" not in text):
                raise
            time.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def _chunks(ids: Sequence[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), _CHUNK):
        yield list(ids[start:start + _CHUNK])


# Labelers and sessions ---------------------------------------------------------------------------

def _labeler(row: Labeler) -> LabelerRow:
    return LabelerRow(id=row.id, name=row.name)


def find_labeler(name: str) -> LabelerRow | None:
    with session_scope() as session:
        row = session.exec(select(Labeler).where(Labeler.name == name)).first()
        return _labeler(row) if row else None


def get_or_create_labeler(name: str) -> LabelerRow:
    """The labeler called `name`; two first sign-ins at once end with one row (the unique name decides)."""
    found = find_labeler(name)
    if found:
        return found

    def insert() -> LabelerRow:
        with session_scope() as session:
            row = Labeler(name=name)
            session.add(row)
            session.flush()
            return _labeler(row)

    try:
        return _retry_locked(insert)
    except IntegrityError:
        found = find_labeler(name)
        if found is None:
            raise
        return found


def list_labelers() -> list[LabelerRow]:
    with session_scope() as session:
        return [_labeler(r) for r in session.exec(select(Labeler).order_by(Labeler.id))]


def _session(row: LabelSession) -> SessionRow:
    return SessionRow(id=row.id, labeler_id=row.labeler_id, queue=row.queue, blind=row.blind,
                      problem_slug=row.problem_slug, started_at=row.started_at, ended_at=row.ended_at)


def create_session(labeler_id: int, queue: str, blind: bool, problem_slug: str | None) -> SessionRow:
    def insert() -> SessionRow:
        with session_scope() as session:
            row = LabelSession(labeler_id=labeler_id, queue=queue, blind=blind, problem_slug=problem_slug)
            session.add(row)
            session.flush()
            return _session(row)

    return _retry_locked(insert)


def get_session(session_id: int) -> SessionRow | None:
    with session_scope() as session:
        row = session.get(LabelSession, session_id)
        return _session(row) if row else None


def end_session(session_id: int) -> None:
    def write() -> None:
        with session_scope() as session:
            session.execute(update(LabelSession).where(col(LabelSession.id) == session_id,
                                                       col(LabelSession.ended_at).is_(None))
                            .values(ended_at=utcnow()))

    _retry_locked(write)


# Votes ------------------------------------------------------------------------------------------

def _label(row: PairLabel) -> LabelRow:
    return LabelRow(id=row.id, candidate_a_id=row.candidate_a_id, candidate_b_id=row.candidate_b_id,
                    labeler_id=row.labeler_id, session_id=row.session_id, choice=row.choice,
                    tags=tuple(row.tags or ()), note=row.note or "", blind=row.blind, undone=row.undone,
                    created_at=row.created_at)


def add_label(*, labeler_id: int, session_id: int | None, candidate_a_id: int, candidate_b_id: int,
              choice: str, tags: Sequence[str] = (), note: str = "", blind: bool = False) -> LabelRow:
    """Insert one vote in its own transaction; concurrent votes only queue, none overwrites another."""

    def insert() -> LabelRow:
        with session_scope() as session:
            row = PairLabel(candidate_a_id=candidate_a_id, candidate_b_id=candidate_b_id, labeler_id=labeler_id,
                            session_id=session_id, choice=choice, tags=list(tags), note=note, blind=blind)
            session.add(row)
            session.flush()
            return _label(row)

    return _retry_locked(insert)


def undo_last_label(session_id: int) -> LabelRow | None:
    """Mark the session's newest live vote undone and return it (None when nothing is left to undo).

    The UPDATE is guarded by `undone = false`, so a double click undoes one vote, not two.
    """
    for _ in range(5):
        with session_scope() as session:
            last = session.exec(select(PairLabel).where(PairLabel.session_id == session_id,
                                                        col(PairLabel.undone).is_(False))
                                .order_by(col(PairLabel.id).desc())).first()
            if last is None:
                return None
            last_id = last.id

        def write(label_id: int = last_id) -> int:
            with session_scope() as session:
                result = session.execute(update(PairLabel).where(col(PairLabel.id) == label_id,
                                                                 col(PairLabel.undone).is_(False))
                                         .values(undone=True))
                return result.rowcount

        if _retry_locked(write):
            with session_scope() as session:
                return _label(session.get(PairLabel, last_id))
    return None


def list_labels(*, include_undone: bool = False, session_id: int | None = None, labeler_id: int | None = None,
                problem_slug: str | None = None) -> list[LabelRow]:
    """Votes in the order cast; `problem_slug` keeps those whose left candidate belongs to that problem."""
    query = select(PairLabel)
    if not include_undone:
        query = query.where(col(PairLabel.undone).is_(False))
    if session_id is not None:
        query = query.where(PairLabel.session_id == session_id)
    if labeler_id is not None:
        query = query.where(PairLabel.labeler_id == labeler_id)
    if problem_slug is not None:
        query = query.join(Candidate, col(Candidate.id) == col(PairLabel.candidate_a_id)).where(
            Candidate.problem_slug == problem_slug)
    with session_scope() as session:
        return [_label(r) for r in session.exec(query.order_by(PairLabel.id))]


def session_choice_counts(session_id: int) -> dict[str, int]:
    """Live votes of a session by choice: the session's progress."""
    with session_scope() as session:
        rows = session.exec(select(PairLabel.choice, func.count()).where(
            PairLabel.session_id == session_id, col(PairLabel.undone).is_(False)).group_by(PairLabel.choice))
        return {choice: int(n) for choice, n in rows}


# Evidence ---------------------------------------------------------------------------------------

def load_evidence(candidate_ids: Sequence[int] | None = None, problem_slugs: Sequence[str] | None = None,
                  *, with_source: bool = True, include_held: bool = False) -> list[CandidateEvidence]:
    """Candidates with their latest evaluation, per-device measurements and static features, by id.

    Without filters, every candidate. `with_source=False` leaves `source` empty for callers (the
    labeling queue) that only need ids, hashes and measurements. A candidate whose latest evaluation is
    flagged and not yet cleared by a person is held back (it enters no dataset, ranker or label queue)
    unless `include_held`.
    """
    with session_scope() as session:
        query = select(Candidate)
        if problem_slugs is not None:
            query = query.where(col(Candidate.problem_slug).in_(list(problem_slugs)))
        if candidate_ids is None:
            candidates = list(session.exec(query.order_by(Candidate.id)))
        else:
            candidates = []
            for chunk in _chunks(sorted(set(candidate_ids))):
                candidates += list(session.exec(query.where(col(Candidate.id).in_(chunk))))
        ids = [c.id for c in candidates]
        evaluations: dict[int, list[Evaluation]] = {}
        statics: dict[int, Diagnostic] = {}
        bottlenecks: dict[int, str] = {}
        for chunk in _chunks(ids):
            for ev in session.exec(select(Evaluation).where(col(Evaluation.candidate_id).in_(chunk))
                                   .order_by(Evaluation.id)):
                evaluations.setdefault(ev.candidate_id, []).append(ev)
            for diag in session.exec(select(Diagnostic).where(col(Diagnostic.candidate_id).in_(chunk))
                                     .order_by(Diagnostic.id)):
                if diag.kind == "static":
                    statics[diag.candidate_id] = diag
                if diag.bottleneck:
                    bottlenecks[diag.candidate_id] = diag.bottleneck
        found = [_evidence(c, evaluations.get(c.id, []), statics.get(c.id), bottlenecks.get(c.id), with_source)
                 for c in sorted(candidates, key=lambda c: c.id)]
        return found if include_held else [e for e in found if not e.flagged]


def list_problem_slugs() -> list[str]:
    """Problems that have at least one candidate, for the labeling filters."""
    with session_scope() as session:
        return sorted(session.exec(select(Candidate.problem_slug).distinct()))


def _context(ev: Evaluation) -> tuple[str | None, str | None]:
    return EvaluationTiming.from_stored(ev.timing).context


def _measurement(device: str, ev: Evaluation, history: Sequence[Evaluation]) -> Measurement:
    """The latest evaluation `ev` on `device`, with the levels of every evaluation in `history` (correct,
    admitted, on this device) measured in the same context."""
    timing = EvaluationTiming.from_stored(ev.timing)
    levels = tuple(level for other in history if _context(other) == timing.context
                   and (level := evaluation_level(other.candidate_us, other.baseline_us, other.speedup)))
    stats = timing.timed_stats(stored_configs(ev.configs))
    return Measurement(device=device, candidate_us=ev.candidate_us, speedup=ev.speedup,
                       baseline=timing.baseline_name, config=timing.timed_config, baseline_us=ev.baseline_us,
                       samples_us=tuple(stats.samples_us or ()) if stats else (),
                       iqr_us=stats.iqr_us if stats else None, trials=stats.trials if stats else None,
                       levels=levels)


def _evidence(candidate: Candidate, evaluations: list[Evaluation], static: Diagnostic | None,
              bottleneck: str | None, with_source: bool) -> CandidateEvidence:
    latest = evaluations[-1] if evaluations else None
    per_device: dict[str, Evaluation] = {}
    timed: dict[str, list[Evaluation]] = {}
    for ev in evaluations:  # oldest first, so the newest per device wins
        per_device[ev.device or "unknown"] = ev
        if ev.verdict == "correct" and admitted(ev.flagged, ev.flag_review):
            timed.setdefault(ev.device or "unknown", []).append(ev)
    measurements = tuple(_measurement(device, ev, timed.get(device, [])) for device, ev in sorted(per_device.items())
                         if ev.verdict == "correct" and admitted(ev.flagged, ev.flag_review)
                         and (ev.candidate_us is not None or ev.speedup is not None))
    features = (static.data or {}).get("features", {}) if static else {}
    return CandidateEvidence(
        id=candidate.id, problem_slug=candidate.problem_slug, language=candidate.language, origin=candidate.origin,
        strategy=candidate.strategy, source=candidate.source if with_source else "",
        source_hash=candidate.source_hash, created_at=candidate.created_at,
        verdict=latest.verdict if latest else None, message=latest.message if latest else "",
        speedup=latest.speedup if latest else None, candidate_us=latest.candidate_us if latest else None,
        device=latest.device if latest else None,
        flagged=not admitted(latest.flagged, latest.flag_review) if latest else False,
        integrity_violation=any(ev.verdict == "integrity_violation" for ev in evaluations),
        features=dict(features) if isinstance(features, dict) else {}, bottleneck=bottleneck,
        measurements=measurements,
        equivalence=equivalence_of(candidate.source_hash or "", candidate.source or "", candidate.language),
        prompt=candidate.prompt if with_source else None)


# Ranker registry --------------------------------------------------------------------------------

def _ranker(row: RankerModel) -> RankerModelRow:
    return RankerModelRow(id=row.id, version=row.version, path=row.path, feature_names=tuple(row.feature_names),
                          data=dict(row.data or {}), metrics=dict(row.metrics or {}), created_at=row.created_at)


def reserve_ranker_version(path_for: Callable[[int], str], feature_names: Sequence[str],
                           data: dict[str, Any]) -> RankerModelRow:
    """Claim the next version number; two trainers finishing at once get two numbers, not one."""
    for _ in range(20):
        with session_scope() as session:
            newest = session.exec(select(func.max(RankerModel.version))).one()
        version = int(newest or 0) + 1

        def insert(version: int = version) -> RankerModelRow:
            with session_scope() as session:
                row = RankerModel(version=version, path=path_for(version), feature_names=list(feature_names),
                                  data={**data, "ready": False}, metrics={})
                session.add(row)
                session.flush()
                return _ranker(row)

        try:
            return _retry_locked(insert)
        except IntegrityError:
            continue
    raise RuntimeError("could not claim a ranker version")


def finish_ranker_version(version: int, metrics: dict[str, Any], data: dict[str, Any]) -> RankerModelRow:
    """Store the metrics and mark the version ready once its files are on disk."""

    def write() -> RankerModelRow:
        with session_scope() as session:
            row = session.exec(select(RankerModel).where(RankerModel.version == version)).one()
            row.metrics = dict(metrics)  # JSON columns are reassigned, never mutated
            row.data = {**data, "ready": True}
            session.add(row)
            session.flush()
            return _ranker(row)

    return _retry_locked(write)


def delete_ranker_version(version: int) -> None:
    with session_scope() as session:
        row = session.exec(select(RankerModel).where(RankerModel.version == version)).first()
        if row:
            session.delete(row)


def list_ranker_models(*, ready_only: bool = True) -> list[RankerModelRow]:
    with session_scope() as session:
        rows = [_ranker(r) for r in session.exec(select(RankerModel).order_by(RankerModel.version))]
    return [r for r in rows if r.ready or not ready_only]


def get_ranker_model(version: int | None = None) -> RankerModelRow | None:
    """Version `version`, or the newest ready one when None."""
    rows = list_ranker_models()
    if version is None:
        return rows[-1] if rows else None
    return next((r for r in rows if r.version == version), None)
