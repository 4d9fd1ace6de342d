"""The boundary's self-check: a probe started as a runner and as a problem probe reports what it saw, and the
findings are decided outside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.sandbox import boundary
from engine.sandbox.selfcheck import checks, run_self_check

PLAN = {"secrets": ["OPENAI_API_KEY"], "unreadable": ["/data"], "unwritable": ["/outside"], "port": 1, "parent": 1}
CLEAN = {"env": ["PATH", "HOME"], "uid": 61001, "read": {"/data": False}, "wrote": {"/outside": False},
         "network": False, "processes": 2, "parent_visible": False, "trace": False, "new_namespace": False,
         "scratch_bytes": 2**20}


def test_what_a_contained_probe_saw_passes_every_check():
    found = checks("runner", CLEAN, PLAN, quota_bytes=2**20)
    assert found and all(f.ok for f in found), [f for f in found if not f.ok]


@pytest.mark.parametrize("leak, check", [
    ({"env": ["PATH", "OPENAI_API_KEY"]}, "no secret in its environment"),
    ({"read": {"/data": True}}, "the data folder and the repository are invisible"),
    ({"wrote": {"/outside": True}}, "writes land only in its scratch folder"),
    ({"network": True}, "no network, not even the host's loopback"),
    ({"parent_visible": True}, "other processes are invisible"),
    ({"uid": os.getuid()}, "runs as an unprivileged user of its own"),
    ({"trace": True}, "tracing and new namespaces are refused"),
    ({"scratch_bytes": 2**40}, "its scratch folder has a quota"),
])
def test_each_way_out_fails_its_own_check(leak, check):
    found = {f.check: f for f in checks("runner", {**CLEAN, **leak}, PLAN, quota_bytes=2**20)}
    assert not found[check].ok and all(f.ok for name, f in found.items() if name != check)


@pytest.mark.skipif(not boundary().namespaced, reason="no OS sandbox on this machine: " + "; ".join(boundary().missing))
def test_the_boundary_holds_for_a_runner_and_a_problem_probe(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.toml").write_text('team_password = "hunter2"\n')
    found = run_self_check(data)
    assert {f.who for f in found} == {"runner", "problem probe"}
    assert all(f.ok for f in found), [f for f in found if not f.ok]
    assert len(found) >= 2 * 7


@pytest.mark.skipif(not boundary().namespaced, reason="no OS sandbox on this machine")
def test_refinery_sandbox_prints_the_self_check():
    from engine.cli import app

    result = CliRunner().invoke(app, ["sandbox"])
    assert result.exit_code == 0, result.output
    assert "problem probe: no network" in result.output.replace("\n", " ") or "no network" in result.output


@pytest.fixture
def no_namespaces(monkeypatch):
    """This process's boundary as on a machine without bubblewrap: the probe runs unwalled, as its own user."""
    monkeypatch.setenv("REFINERY_BWRAP", "/nonexistent/bwrap")
    boundary.cache_clear()
    assert not boundary().namespaced
    yield
    monkeypatch.undo()
    boundary.cache_clear()


def _markers(folders) -> set[str]:
    return {str(entry) for folder in folders for entry in folder.glob("selfcheck-*")}


def test_a_self_check_without_namespaces_leaves_no_file_where_its_probe_wrote(no_namespaces, tmp_path):
    from engine.sandbox.programs import REPO_ROOT

    folders = [Path("/"), Path("/usr"), REPO_ROOT]
    before = _markers(folders)
    found = {(f.who, f.check): f for f in run_self_check(tmp_path)}
    wrote = found[("runner", "writes land only in its scratch folder")]
    assert not wrote.ok and str(REPO_ROOT) in wrote.observed  # the write got through and is reported
    assert _markers(folders) == before  # ... and the file it made is gone


def test_packages_found_through_pythonpath_are_searched_inside_and_the_repository_is_not(tmp_path, monkeypatch):
    """As on the GPU machine, whose libraries are unpacked into a folder named on PYTHONPATH: the view mounts
    it, and the child must be told of it too (the judge failed to import pydantic there)."""
    from engine.sandbox import programs

    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(programs.REPO_ROOT), str(site), str(tmp_path / "none")]))
    assert programs.package_paths() == [str(site.resolve())]
    searched = programs.python_env(("engine",))["PYTHONPATH"].split(os.pathsep)
    assert str(site.resolve()) in searched and str(programs.REPO_ROOT) not in searched[1:]
