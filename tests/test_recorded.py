"""Recorded runs round-trip: saved from one database, loaded into another, marked recorded, once."""

from __future__ import annotations

from db import runs_repo
from db.session import reset_engines
from engine.runs.run import RunRequest, create_run
from engine.settings import get_settings
from engine.store.database import use_settings_database
from engine.store.recorded import load_recorded, save_recording
from tests.test_runs import problem_slug, run  # noqa: F401 - fixture and helper


def test_recording_loads_into_another_database_as_recorded_and_only_once(problem_slug, tmp_path,  # noqa: F811
                                                                         monkeypatch):
    run_id = create_run(RunRequest(problem_slug, strategy="mcts", rounds=3))
    run(run_id)
    source_rows = runs_repo.tree_rows(run_id)
    folder = tmp_path / "recorded"
    folder.mkdir()
    assert save_recording(get_settings().resolved_database_url, folder / "gpu.jsonl") == 1

    monkeypatch.setenv("REFINERY_DATABASE_URL", f"sqlite:///{tmp_path / 'other.db'}")
    get_settings.cache_clear()
    reset_engines()
    use_settings_database()
    assert load_recorded(folder) == 1
    assert load_recorded(folder) == 0
    (loaded,) = runs_repo.list_runs()
    assert loaded.recorded and loaded.problem_slug == problem_slug
    rows = runs_repo.tree_rows(loaded.id)
    assert [r.candidate.step for r in rows] == [r.candidate.step for r in source_rows]
    assert rows[1].candidate.parent_id in {r.candidate.id for r in rows}
    assert all(r.evaluation.recorded and r.evaluation.verdict == "correct" for r in rows)
    assert all(r.feedback is not None for r in rows)


def test_every_shipped_recording_loads_as_real_gpu_measurements(refinery_home):
    from engine.store.recorded import RECORDED_DIR

    shipped = sorted(RECORDED_DIR.glob("*.jsonl"))
    assert shipped, "assets/recorded holds no recording"
    loaded = load_recorded()
    runs = runs_repo.list_runs()
    assert loaded == len(runs) == sum(len(p.read_text().splitlines()) for p in shipped)
    for summary in runs:
        rows = runs_repo.tree_rows(summary.id)
        assert summary.recorded and rows
        for row in rows:
            evaluation = row.evaluation
            assert evaluation.recorded and "H200" in evaluation.device
            if evaluation.verdict == "correct":
                assert evaluation.candidate_us > 0 and evaluation.baseline_us > 0
                (timed,) = [c["candidate"] for c in evaluation.configs if c.get("candidate")]
                assert timed["clock"] == "cuda-events" and timed["trials"] >= 10 and timed["wall_us"] > 0


def test_the_cli_loads_the_shipped_recordings_once(refinery_home):
    from typer.testing import CliRunner

    from engine.cli import app

    first = CliRunner().invoke(app, ["runs", "load-recorded"])
    assert first.exit_code == 0 and "loaded" in first.output, first.output
    again = CliRunner().invoke(app, ["runs", "load-recorded"])
    assert again.exit_code == 0 and "already" in again.output, again.output


def test_a_shipped_flagged_result_awaiting_review_loads_with_its_speed_term_held(refinery_home):
    import math

    from sqlmodel import select

    from db.models import Evaluation
    from db.session import session_scope

    load_recorded()
    with session_scope() as session:
        flagged = session.exec(select(Evaluation).where(Evaluation.flagged == True)).all()  # noqa: E712
        assert flagged  # the recordings hold results over 10x, flagged
        for ev in flagged:
            components = ev.reward_components
            assert components["speed"] is None
            assert abs(components["speed_held"] - math.log(ev.speedup)) < 1e-9
            assert ev.reward == components["total"] < 1.0  # structural only: no speed term
