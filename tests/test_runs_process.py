"""A real run process on a CPU problem: it survives SIGKILL mid-step and resumes with no lost or
duplicated step, and it is started detached from its caller."""

from __future__ import annotations

import os
import signal
import textwrap
import time

import pytest

from db import runs_repo
from engine.runs.run import RunRequest, create_run, execute_run, run_folder, spawn_run_process
from engine.settings import get_settings

TOML = textwrap.dedent("""
    title = "Scale"
    kind = "c"
    entry = "scale"
    tags = ["elementwise"]
    [model]
    flops = "N"
    bytes = "8 * N"
    [[configs]]
    name = "small"
    params = { N = 1000 }
    [[configs]]
    name = "odd"
    hidden = true
    params = { N = 1001 }
    [[args]]
    name = "n"
    type = "int"
    value = "N"
    [[args]]
    name = "x"
    type = "const float*"
    size = "N"
    [[args]]
    name = "y"
    type = "float*"
    size = "N"
    intent = "out"
""")
CPU_IMPL = textwrap.dedent("""
    #include <unistd.h>
    #define PAUSE_US {pause}
    void scale(int n, const float *x, float *y) {{
        if (PAUSE_US) usleep(PAUSE_US);  /* makes a step long enough to be killed in */
        for (int i = 0; i < n; i++) y[i] = 2.0f * x[i];
    }}
""")


@pytest.fixture
def slow_problem(refinery_home):
    folder = refinery_home / "problems" / "c" / "scale"
    (folder / "impls").mkdir(parents=True)
    (folder / "reference.c").write_text("void scale(int n, const float *x, float *y) "
                                        "{ for (int i = 0; i < n; i++) y[i] = 2.0f * x[i]; }\n")
    toml = TOML
    for name, strategy in (("plain", "cpu-naive"), ("blocked", "cpu-blocked"), ("vector", "cpu-vectorized")):
        (folder / "impls" / f"{name}.c").write_text(CPU_IMPL.format(pause=200_000))
        toml += (f'\n[[implementations]]\nname = "{name}"\nfile = "impls/{name}.c"\nstrategy = "{strategy}"\n'
                 f'device = "cpu"\n')
    (folder / "problem.toml").write_text(toml)
    return "scale"


def _wait_for_steps(run_id: int, count: int, timeout_s: float = 240) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if len({r.candidate.step for r in runs_repo.tree_rows(run_id)}) >= count:
            return
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not store {count} steps in {timeout_s} s")


@pytest.mark.slow
def test_sigkill_mid_step_then_resume_loses_and_duplicates_nothing(slow_problem, monkeypatch, request):
    for name, value in {"REFINERY_TIMING_MIN_TRIALS": "3", "REFINERY_TIMING_MIN_SECONDS": "0.05",
                        "REFINERY_TIMING_MAX_TRIALS": "5"}.items():  # what is tested is the kill, not the timing
        monkeypatch.setenv(name, value)
    get_settings.cache_clear()
    request.addfinalizer(get_settings.cache_clear)  # later tests read the settings of their own environment
    run_id = create_run(RunRequest(slow_problem, strategy="iterative", rounds=3, device="cpu"))
    process = spawn_run_process(run_id)
    try:
        _wait_for_steps(run_id, 2)
        time.sleep(0.3)  # well inside the third step: its candidate sleeps in the worker
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    stored = [r.candidate.step for r in runs_repo.tree_rows(run_id)]
    assert stored == sorted(set(stored)) and len(stored) >= 2
    run_log = (run_folder(run_id) / "run.log").read_text()  # what the page points a user to has the steps
    assert f"run {run_id}: started:" in run_log and f"run {run_id}: step 1: evaluating 1 proposal(s)" in run_log
    assert execute_run(run_id) == "finished"
    rows = runs_repo.tree_rows(run_id)
    assert [r.candidate.step for r in rows] == [0, 1, 2]
    assert all(r.evaluation is not None for r in rows)
    assert sum(e.kind == "resumed" for e in runs_repo.events(run_id)) >= 1
