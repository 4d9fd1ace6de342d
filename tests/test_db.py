"""The schema round-trips on SQLite and PostgreSQL, created by the Alembic migrations."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, inspect, text
from sqlmodel import Session, select

from db.models import Candidate, Evaluation, Labeler, PairLabel, Run
from db.session import make_engine, migrate, reset_engines, session_scope, use_database


def _round_trip(engine) -> None:
    slug = f"relu-{uuid.uuid4().hex[:6]}"
    with Session(engine) as session:
        run = Run(problem_slug=slug, proposer="library", strategy="mcts", rounds_budget=4, config={"seed": 3})
        session.add(run)
        session.commit()
        parent = Candidate(run_id=run.id, problem_slug=slug, step=0, origin="library", source="a", source_hash="h0")
        session.add(parent)
        session.commit()
        child = Candidate(run_id=run.id, problem_slug=slug, parent_id=parent.id, step=1, depth=1, origin="llm",
                          source="b", source_hash="h1", proposal={"tunables": {"BLOCK_SIZE": 256}})
        session.add(child)
        session.commit()
        session.add(Evaluation(candidate_id=child.id, verdict="correct", speedup=2.5,
                               configs=[{"name": "small", "ok": True, "max_abs_error": 1e-6}]))
        labeler = Labeler(name=f"ada-{slug}")
        session.add(labeler)
        session.commit()
        session.add(PairLabel(candidate_a_id=parent.id, candidate_b_id=child.id, labeler_id=labeler.id, choice="b",
                              tags=["coalescing"], note="reads are contiguous"))
        session.commit()
        run_id, child_id = run.id, child.id

    with Session(engine) as session:
        run = session.get(Run, run_id)
        assert run.config == {"seed": 3}
        assert run.created_at.tzinfo is not None
        child = session.get(Candidate, child_id)
        assert child.proposal["tunables"]["BLOCK_SIZE"] == 256
        evaluation = session.exec(select(Evaluation).where(Evaluation.candidate_id == child_id)).one()
        assert evaluation.configs[0]["max_abs_error"] == pytest.approx(1e-6)
        label = session.exec(select(PairLabel).where(PairLabel.candidate_b_id == child_id)).one()
        assert label.tags == ["coalescing"] and label.choice == "b"


def test_sqlite_file_round_trips_through_migrations(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    migrate(engine)
    _round_trip(engine)


def test_sqlite_uses_wal_and_a_busy_timeout(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    migrate(engine)
    with engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 10_000


def test_migrations_create_every_table(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    migrate(engine)
    tables = set(inspect(engine).get_table_names())
    assert {"problem", "run", "candidate", "evaluation", "diagnostic", "run_control", "run_event", "labeler",
            "label_session", "pair_label", "ranker_model", "export", "alembic_version"} <= tables


def test_migrating_twice_is_harmless(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    migrate(engine)
    migrate(engine)
    _round_trip(engine)


def test_settings_default_database_is_a_sqlite_file_in_home(refinery_home):
    from engine.settings import get_settings

    assert get_settings().resolved_database_url == f"sqlite:///{refinery_home / 'refinery.db'}"


def test_sessions_open_the_database_the_caller_named(tmp_path):
    url = f"sqlite:///{tmp_path / 'named.db'}"
    previous = use_database(url)
    try:
        with session_scope() as session:
            session.add(Run(problem_slug="relu", proposer="library", strategy="mcts", rounds_budget=1))
        assert (tmp_path / "named.db").is_file()
    finally:
        assert use_database(previous) == url
        reset_engines()


def test_a_session_before_any_database_was_named_is_refused():
    previous = use_database(None)
    try:
        with pytest.raises(RuntimeError, match="use_database"), session_scope():
            pass
    finally:
        use_database(previous)


@pytest.mark.postgres
def test_postgresql_round_trips_through_migrations(postgres_url):
    schema = f"t_{uuid.uuid4().hex[:8]}"
    admin = create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://"))
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        engine = make_engine(postgres_url + f"?options=-csearch_path%3D{schema}")
        migrate(engine)
        assert "candidate" in inspect(engine).get_table_names(schema=schema)
        _round_trip(engine)
        engine.dispose()
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()
