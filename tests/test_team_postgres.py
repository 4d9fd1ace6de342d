"""A team on one PostgreSQL database: two run processes and two labelers write at the same time, and
every step and every vote is stored exactly once, visible to anyone reading that database."""

from __future__ import annotations

import itertools
import random
import threading
import time
import uuid

import pytest
from sqlalchemy import create_engine, func, text
from sqlmodel import select

from db import runs_repo
from db.labels import add_label, create_session, get_or_create_labeler, list_labels
from db.models import Candidate
from db.session import reset_engines, session_scope
from engine.rank.synthetic import SyntheticConfig, write_synthetic
from engine.runs.run import RunRequest, create_run, run_folder, spawn_run_process
from engine.settings import get_settings
from engine.store.database import use_settings_database
from tests.c_problem_support import FAST_TIMING, write_c_problem
from tests.test_scale_ray import prebuild

pytestmark = pytest.mark.postgres

RUN_TIMEOUT_S = 400
ROUNDS, SAMPLES = 3, 2


@pytest.fixture
def team_database(refinery_home, postgres_url, monkeypatch):
    """REFINERY_DATABASE_URL pointing at a fresh schema of the test server, for this process and its children."""
    schema = f"team_{uuid.uuid4().hex[:10]}"
    admin = create_engine(postgres_url.replace("postgresql://", "postgresql+psycopg://"))
    with admin.begin() as connection:
        connection.execute(text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in postgres_url else "?"
    monkeypatch.setenv("REFINERY_DATABASE_URL", f"{postgres_url}{separator}options=-csearch_path%3D{schema}")
    for name, value in FAST_TIMING.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("REFINERY_RAY", "0")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    get_settings.cache_clear()
    reset_engines()
    use_settings_database()
    yield refinery_home
    reset_engines()
    with admin.begin() as connection:
        connection.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


class Labeler(threading.Thread):
    """Votes on random pairs of whatever candidates exist, until told to stop; remembers what it cast."""

    def __init__(self, name: str, stop: threading.Event, minimum: int) -> None:
        super().__init__(name=name)
        self.stop, self.minimum, self.cast, self.error = stop, minimum, [], None
        self.rng = random.Random(name)

    def run(self) -> None:
        try:
            labeler = get_or_create_labeler(self.name)
            self.session_id = create_session(labeler.id, "random", False, None).id
            while not self.stop.is_set() or len(self.cast) < self.minimum:
                with session_scope() as session:
                    ids = list(session.exec(select(Candidate.id)))
                a, b = self.rng.sample(ids, 2)
                vote = add_label(labeler_id=labeler.id, session_id=self.session_id, candidate_a_id=a,
                                 candidate_b_id=b, choice=self.rng.choice(["a", "b", "tie"]), tags=["memory"])
                self.cast.append(vote.id)
                time.sleep(0.02)
        except Exception as exc:  # noqa: BLE001 - reported by the test's assertion
            self.error = exc


def _log(run_id: int) -> str:
    path = run_folder(run_id) / "run.log"
    return path.read_text()[-3000:] if path.exists() else "(no log)"


def test_two_runs_and_two_labelers_at_once_lose_and_duplicate_nothing(team_database):
    # Seven distinct candidates for the library (three implementations, one with four settings): enough for
    # every (step, sample) of both runs, since a run never measures the same code twice.
    slug = write_c_problem(team_database, names=("plain", "last-lost", "broken", "unrolled"))
    prebuild(slug)
    write_synthetic(SyntheticConfig(problems=1, candidates_per_problem=4, seed=5, prefix="team"))
    run_ids = [create_run(RunRequest(slug, strategy="iterative", rounds=ROUNDS, samples=SAMPLES, device="cpu"))
               for _ in range(2)]
    processes = [spawn_run_process(run_id) for run_id in run_ids]
    stop = threading.Event()
    labelers = [Labeler(name, stop, minimum=25) for name in ("ada", "bob")]
    for labeler in labelers:
        labeler.start()
    try:
        codes = [process.wait(timeout=RUN_TIMEOUT_S) for process in processes]
    finally:
        stop.set()
        for process in processes:
            if process.poll() is None:
                process.kill()
        for labeler in labelers:
            labeler.join(timeout=60)
    assert codes == [0, 0], [_log(run_id) for run_id in run_ids]

    expected = list(itertools.product(range(ROUNDS), range(SAMPLES)))
    for run_id in run_ids:
        assert runs_repo.get_run(run_id).status == "finished", _log(run_id)
        rows = runs_repo.tree_rows(run_id)
        assert [(r.candidate.step, r.candidate.sample) for r in rows] == expected
        assert all(r.evaluation is not None for r in rows)
        assert sum(e.kind == "round" for e in runs_repo.events(run_id)) == len(expected)
        with session_scope() as session:
            stored = session.exec(select(func.count()).select_from(Candidate).where(Candidate.run_id == run_id)).one()
        assert stored == len(expected)
    assert set(run_ids) <= {run.id for run in runs_repo.list_runs()}  # one dashboard lists both

    for labeler in labelers:
        assert labeler.error is None, labeler.error
        stored = [label.id for label in list_labels(session_id=labeler.session_id)]
        assert stored == labeler.cast and len(set(stored)) == len(stored) >= 25
    assert len(list_labels()) == sum(len(labeler.cast) for labeler in labelers)
