"""The tables. Scalar columns that are filtered, sorted or charted on are indexed; JSON columns hold
raw blobs (per-configuration results, profiler metrics) and are always reassigned, never mutated."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import JSON, Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


def utcnow() -> datetime:
    return datetime.now(UTC)


def _json(default: Any = None) -> Any:
    factory = (lambda: dict(default)) if isinstance(default, dict) else (lambda: list(default or []))
    return Field(default_factory=factory, sa_column=Column(JSON, nullable=False))


def _text(nullable: bool = True) -> Any:
    return Field(default=None if nullable else "", sa_column=Column(Text, nullable=nullable))


class ProblemRecord(SQLModel, table=True):
    """A problem known to this database: built-in, imported from KernelBench, or uploaded."""

    __tablename__ = "problem"
    id: int | None = Field(default=None, primary_key=True)
    slug: str = Field(index=True, unique=True)
    kind: str = Field(index=True)  # pytorch | c
    title: str
    source: str = Field(default="builtin", index=True)  # builtin | kernelbench | upload
    path: str
    content_hash: str
    tags: list[str] = _json([])
    created_at: datetime = Field(default_factory=utcnow)


class Run(SQLModel, table=True):
    __tablename__ = "run"
    id: int | None = Field(default=None, primary_key=True)
    problem_slug: str = Field(index=True)
    proposer: str = Field(index=True)
    strategy: str = Field(index=True)
    rounds_budget: int
    status: str = Field(default="queued", index=True)  # queued|running|paused|stopped|finished|failed
    config: dict = _json({})  # proposer/strategy options, seed, LLM endpoint (never the key)
    device: str | None = None
    folder: str | None = None
    pid: int | None = None
    error: str | None = _text()
    recorded: bool = Field(default=False, index=True)  # shipped recording of a real GPU run
    created_at: datetime = Field(default_factory=utcnow, index=True)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    heartbeat_at: datetime | None = None  # the run process's last sign of life (engine.runs.run.Heartbeat)
    host: str | None = None  # where the run process runs


class Candidate(SQLModel, table=True):
    """One node of a run's search tree (or a shipped/human candidate outside any run)."""

    __tablename__ = "candidate"
    __table_args__ = (UniqueConstraint("run_id", "step", "sample", name="uq_candidate_run_step_sample"),)
    id: int | None = Field(default=None, primary_key=True)
    run_id: int | None = Field(default=None, foreign_key="run.id", index=True)
    problem_slug: str = Field(index=True)
    parent_id: int | None = Field(default=None, foreign_key="candidate.id", index=True)
    step: int | None = Field(default=None, index=True)  # the run's step (round) that produced it
    sample: int = 0  # index within the step (best-of-N, beam width)
    depth: int = 0  # distance from the root in the tree
    origin: str = Field(index=True)  # llm | library | human | shipped
    strategy: str | None = Field(default=None, index=True)  # implementation strategy tag, if known
    language: str = "python"  # python | cuda | c
    source: str = _text(nullable=False)
    source_hash: str = Field(index=True)
    prompt: str | None = _text()
    reply: str | None = _text()
    reasoning: str | None = _text()  # a reasoning model's thinking, apart from the reply (never parsed as code)
    prompt_template: str | None = None  # "name@sha" of the template file
    proposal: dict = _json({})  # proposer's own notes: implementation, tunables, findings used
    tokens_in: int | None = None
    tokens_out: int | None = None
    latency_s: float | None = None
    created_at: datetime = Field(default_factory=utcnow, index=True)


class Evaluation(SQLModel, table=True):
    __tablename__ = "evaluation"
    id: int | None = Field(default=None, primary_key=True)
    candidate_id: int = Field(foreign_key="candidate.id", index=True)
    verdict: str = Field(index=True)
    message: str = ""
    log: str | None = _text()
    configs: list[dict] = _json([])  # per configuration: name, hidden, ok, max_abs, max_rel, times
    integrity: list[dict] = _json([])  # checks that ran and what they found
    candidate_us: float | None = None  # median over the timed configuration
    baseline_us: float | None = None
    speedup: float | None = Field(default=None, index=True)
    timing: dict = _json({})  # trials, IQR, wall cross-check, baselines by name
    reward: float | None = Field(default=None, index=True)
    reward_components: dict = _json({})
    device: str | None = Field(default=None, index=True)
    flagged: bool = Field(default=False, index=True)  # needs a human look (implausible speedup)
    # A person's decision on a flag: "cleared" (the speed is real: paid, and the row enters datasets) or
    # "rejected" (not real: a cheat's reward). Until then a flagged row earns no speed and enters no dataset.
    flag_review: str | None = Field(default=None, index=True)
    flag_reviewer: str | None = None
    flag_reviewed_at: datetime | None = None
    flag_review_note: str | None = _text()
    recorded: bool = False
    created_at: datetime = Field(default_factory=utcnow, index=True)


class Diagnostic(SQLModel, table=True):
    """Analysis of one candidate: static features, ncu metrics, energy, roofline, feedback sent."""

    __tablename__ = "diagnostic"
    id: int | None = Field(default=None, primary_key=True)
    candidate_id: int = Field(foreign_key="candidate.id", index=True)
    kind: str = Field(index=True)  # static | ncu | energy | roofline | feedback
    bottleneck: str | None = Field(default=None, index=True)
    data: dict = _json({})
    text: str | None = _text()
    created_at: datetime = Field(default_factory=utcnow)


class RunControl(SQLModel, table=True):
    """A request from a user to a running run, read by the run process between steps."""

    __tablename__ = "run_control"
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    action: str  # pause | resume | stop | hint | fork | insert
    payload: dict = _json({})
    created_at: datetime = Field(default_factory=utcnow)
    consumed_at: datetime | None = Field(default=None, index=True)


class RunEvent(SQLModel, table=True):
    __tablename__ = "run_event"
    id: int | None = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="run.id", index=True)
    kind: str  # started | round | paused | resumed | stopped | finished | error | message
    step: int | None = None
    candidate_id: int | None = None
    message: str = ""
    created_at: datetime = Field(default_factory=utcnow, index=True)


class Labeler(SQLModel, table=True):
    __tablename__ = "labeler"
    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    created_at: datetime = Field(default_factory=utcnow)


class LabelSession(SQLModel, table=True):
    __tablename__ = "label_session"
    id: int | None = Field(default=None, primary_key=True)
    labeler_id: int = Field(foreign_key="labeler.id", index=True)
    queue: str = "uncertain"  # uncertain | disagreement | new-problems | random
    blind: bool = False
    problem_slug: str | None = None
    started_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None


class PairLabel(SQLModel, table=True):
    __tablename__ = "pair_label"
    id: int | None = Field(default=None, primary_key=True)
    candidate_a_id: int = Field(foreign_key="candidate.id", index=True)
    candidate_b_id: int = Field(foreign_key="candidate.id", index=True)
    labeler_id: int = Field(foreign_key="labeler.id", index=True)
    session_id: int | None = Field(default=None, foreign_key="label_session.id", index=True)
    choice: str  # a | b | tie | both_bad | skip
    tags: list[str] = _json([])
    note: str = ""
    blind: bool = False
    undone: bool = Field(default=False, index=True)
    created_at: datetime = Field(default_factory=utcnow, index=True)


class RankerModel(SQLModel, table=True):
    __tablename__ = "ranker_model"
    id: int | None = Field(default=None, primary_key=True)
    version: int = Field(index=True, unique=True)
    path: str
    feature_names: list[str] = _json([])
    data: dict = _json({})  # counts and sources of training pairs, held-out problems
    metrics: dict = _json({})
    created_at: datetime = Field(default_factory=utcnow)


class ExportRecord(SQLModel, table=True):
    __tablename__ = "export"
    id: int | None = Field(default=None, primary_key=True)
    kind: str  # preferences | ranked | trajectories | candidates
    format: str  # jsonl | parquet
    out_dir: str
    filters: dict = _json({})
    counts: dict = _json({})
    created_at: datetime = Field(default_factory=utcnow)
