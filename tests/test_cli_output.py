"""The command line read by a script: whole cells when not on a terminal, `--json` on list commands, no
spinner left behind an error, a step clock that does not restart, a run log without migration chatter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.testing import add_round, make_run
from engine.cli import app

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def cli(refinery_home, monkeypatch) -> CliRunner:
    monkeypatch.delenv("COLUMNS", raising=False)  # as a script's pipe sees it: no width given
    return CliRunner()


def _invoke(cli: CliRunner, *args: str) -> str:
    result = cli.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_problems_list_into_a_pipe_prints_every_slug_and_title_whole(cli) -> None:
    from engine.problems import scan_all

    problems = scan_all().problems
    output = _invoke(cli, "problems", "list")
    assert "…" not in output
    for problem in problems:
        assert problem.slug in output and problem.title in output


def test_problems_list_json_is_one_array_with_every_problem(cli) -> None:
    from engine.problems import scan_all

    records = json.loads(_invoke(cli, "problems", "list", "--json"))
    assert [r["slug"] for r in records] == [p.slug for p in scan_all().problems]
    assert {"kind", "title", "configs", "hidden_configs", "implementations", "tags"} <= set(records[0])
    assert json.loads(_invoke(cli, "problems", "list", "--kind", "c", "--json")) == [
        r for r in records if r["kind"] == "c"]


def test_runs_list_shows_steps_done_of_the_budget_and_as_json(cli) -> None:
    run_id = make_run(rounds=10)
    for step in range(3):
        add_round(run_id, step)
    empty = make_run(rounds=4, status="queued")
    output = _invoke(cli, "runs", "list")
    assert "steps (done / budget)" in output and "3 / 10" in output and "0 / 4" in output
    records = {r["id"]: r for r in json.loads(_invoke(cli, "runs", "list", "--json"))}
    assert (records[run_id]["steps_done"], records[run_id]["steps_budget"]) == (3, 10)
    assert (records[empty]["steps_done"], records[empty]["status"]) == (0, "queued")


def test_flags_list_and_rank_list_have_json_too(cli) -> None:
    assert json.loads(_invoke(cli, "flags", "list", "--json")) == []
    assert json.loads(_invoke(cli, "rank", "list", "--json")) == []


def test_an_export_error_is_the_last_thing_printed_with_no_spinner_line_after_it(cli) -> None:
    result = cli.invoke(app, ["export", "preferences", "--format", "xml"])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines and "unknown format" in lines[-1], result.output
    assert "exporting" not in result.output


def test_the_run_progress_clock_counts_from_the_step_start_not_from_each_message(monkeypatch) -> None:
    from engine.cli import runs as run_commands

    now = [100.0]
    monkeypatch.setattr(run_commands.time, "monotonic", lambda: now[0])
    progress = run_commands._Progress()
    progress.set("step 0: asking the llm proposer")
    now[0] += 12
    progress.set("step 0: sample 1 is in (1 of 4)")
    now[0] += 3
    assert progress.__rich__().text == "step 0: sample 1 is in (1 of 4) (15 s into the step)"
    progress.step_stored()
    now[0] += 2
    progress.set("step 1: asking the llm proposer")
    assert progress.__rich__().text.endswith("(2 s into the step)")


def test_the_run_log_does_not_start_with_the_database_upgrade(tmp_path) -> None:
    script = ("from engine.runs.run import configure_run_log\n"
              "configure_run_log()\n"
              "from db.session import get_engine\n"
              f"get_engine('sqlite:///{tmp_path / 'fresh.db'}')\n"
              "import logging; logging.getLogger('refinery.run').info('run 1: started')\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "fresh.db").is_file()  # the upgrade ran
    assert result.stderr.splitlines()[0].endswith("refinery.run: run 1: started"), result.stderr


def test_the_command_line_runs_as_a_module_where_the_script_is_not_installed():
    """`python -m engine.cli` is how the sandbox install test and the device benchmarks call `refinery`."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "engine.cli", "--help"], cwd=root, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "settings" in done.stdout and "flags" in done.stdout
