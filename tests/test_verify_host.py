"""Where a candidate was timed and what else ran meanwhile: the runner joins its slot's timing core for
the job, every evaluation that reached a worker carries the host record (and stores it), the line a
user reads says whether the cores were its own, and a CPU timing that shared its cores with busy
processes says it is less trustworthy."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.schema.verdict import EvaluationResult, Verdict
from engine.verify.evaluate import VerifyOptions
from engine.verify.host import BusyProcess, HostRecord, HostWatch, notes_for, summary
from engine.verify.judge.job import Job
from engine.verify.pool import JobOutcome, PoolConfig, WorkerPool
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy
from tests.verify_support import verifier_in_fresh_home

CHEATS = Path(__file__).parent / "cheats"
FAST = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=30, min_seconds=0.0, max_trials=30,
                                                             max_seconds=1.0, flush_bytes=1 << 20)), timeout_s=120)
USABLE = sorted(os.sched_getaffinity(0))
CORE = USABLE[-1]
ONLY_ON_CORE = f"""/* Right only while it runs on core {CORE} alone: its calls, the timed ones too, ran there. */
#define _GNU_SOURCE
#include <sched.h>

void kernel_scale(int n, float alpha, const float *x, float *y)
{{
    cpu_set_t set;
    int alone = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET({CORE}, &set);
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + (alone ? 1.0f : 2.0f);
}}
"""
WIDENS_ITS_CORES = """/* Moves itself back onto every core before doing honest work. */
#define _GNU_SOURCE
#include <sched.h>

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
    for (int i = 0; i < n; i++)
        y[i] = alpha * x[i] + 1.0f;
}
"""
needs_two_cores = pytest.mark.skipif(len(USABLE) < 2, reason="needs two usable cores to set one aside")


def busy_loop() -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-S", "-c", "while True: pass"])


def watched(job_roots, labels=None, seconds: float = 0.6) -> HostRecord:
    watch = HostWatch(job_roots, USABLE, exclusive=False, labels=labels)
    watch.begin("timing")
    time.sleep(seconds)
    return watch.finish()


# --- the watch and the record ---------------------------------------------------------------------------


def test_a_busy_process_beside_the_job_is_named_with_its_share():
    other = busy_loop()
    try:
        time.sleep(0.2)
        record = watched([])
    finally:
        other.kill()
        other.wait()
    names = {b.name: b for b in record.busy_others}
    assert "python" in " ".join(names) and record.others_cpu_pct > 20
    assert record.window == "timing" and record.window_s >= 0.5 and len(record.load_avg) == 3


def test_the_jobs_own_processes_are_left_out():
    own = busy_loop()
    try:
        time.sleep(0.2)
        record = watched([own.pid], labels={})
        labelled = watched([], labels={own.pid: "warming runner"})
    finally:
        own.kill()
        own.wait()
    assert all(b.name != "warming runner" for b in record.busy_others)
    assert any(b.name == "warming runner" and b.cpu_pct > 20 for b in labelled.busy_others)


def test_the_line_says_an_exclusive_core_and_a_quiet_machine():
    record = HostRecord(cores=[3], exclusive=True, load_avg=[0.4, 0.3, 0.2])
    assert summary(record) == "timed on core 3 (exclusive); load 0.40; nothing else busy"


def test_the_line_says_shared_cores_who_was_busy_and_what_else_was_in_flight():
    record = HostRecord(cores=[0, 1], exclusive=False, load_avg=[1.9, 1.0, 0.5], in_flight=1,
                        busy_others=[BusyProcess("streamlit", 45.0), BusyProcess("cc1", 30.0, processes=2)])
    assert summary(record) == ("timed on shared cores 0-1; load 1.90; streamlit 45 %, cc1 ×2 30 % busy; "
                                "1 other evaluation in flight")


def test_a_cpu_timing_beside_busy_processes_on_its_cores_is_called_less_trustworthy():
    record = HostRecord(cores=[0, 1], exclusive=False, busy_others=[BusyProcess("streamlit", 45.0)])
    notes = notes_for(record, "perf-counter")
    assert notes[0].startswith("timed on shared cores") and "less trustworthy" in notes[1]
    assert "streamlit 45 %" in notes[1]


def test_busy_processes_on_other_cores_or_a_gpu_timing_get_only_the_line():
    away = HostRecord(cores=[3], exclusive=True, busy_others=[BusyProcess("cc1", 90.0, shares_cores=False)])
    assert len(notes_for(away, "perf-counter")) == 1 and "(other cores)" in notes_for(away, "perf-counter")[0]
    gpu = HostRecord(cores=[0, 1], exclusive=False, busy_others=[BusyProcess("streamlit", 45.0)])
    assert len(notes_for(gpu, "cuda-events")) == 1
    assert notes_for(None, "perf-counter") == [] and notes_for(gpu, None) == []


def test_the_record_round_trips_through_the_result_and_the_stored_row():
    from engine.store.evaluation import evaluation_row, result_from_row

    host = HostRecord(cores=[3], exclusive=True, setup="timing on 3", load_avg=[0.1, 0.1, 0.1],
                      busy_others=[BusyProcess("cc1", 12.5, 2, False)], in_flight=2)
    result = EvaluationResult(Verdict.CORRECT, "ok", host=host)
    assert EvaluationResult.from_json(result.to_json()).host == host
    row = evaluation_row(result, candidate_id=1)
    assert row.timing["host"]["cores"] == [3] and result_from_row(row).host == host


def test_a_runs_stored_row_carries_the_host_record_and_the_notes():
    from engine.reward.score import RewardBreakdown
    from engine.store.outcome import RoundOutcome

    result = EvaluationResult(Verdict.CORRECT, "ok", host=HostRecord(cores=[3], exclusive=True),
                              notes=["timed on core 3 (exclusive); nothing else busy"])
    row = RoundOutcome(result, RewardBreakdown(1.0, True, 0.5, 0.0, None, None, 0.2)).evaluation_row()
    assert row.timing["host"]["cores"] == [3] and row.timing["notes"] == result.notes


def test_the_pool_counts_other_evaluations_in_flight_beside_each_job(tmp_path):
    class SlowSlot:  # stands in for a slot's judge and runner: each job takes a moment
        def run(self, job, timeout_s):
            time.sleep(0.5)
            return JobOutcome("ok", host=HostRecord(cores=[0], exclusive=False))

        def close(self):
            pass

    pool = WorkerPool(size=3, config=PoolConfig(cache_dir=tmp_path, timing_cores="off"))
    pool._idle = queue.Queue()
    for slot in (SlowSlot(), SlowSlot(), SlowSlot()):
        pool._idle.put(slot)
    job = Job(kind="pytorch", device="cpu", candidate_source="", candidate_language="python", configs=[],
              init_seed=0, mode="info")
    try:
        together = [pool.submit(job) for _ in range(3)]
        assert [f.result().host.in_flight for f in together] == [2, 2, 2]
        assert pool.run(job).host.in_flight == 0
    finally:
        pool.close()


# --- a pool with a timing core set aside ----------------------------------------------------------------


@pytest.fixture(scope="module")
def pinned(tmp_path_factory):
    if len(USABLE) < 2:
        pytest.skip("needs two usable cores to set one aside")
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("REFINERY_TIMING_CORES", str(CORE))
    try:
        with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), FAST) as verifier:
            yield verifier
    finally:
        monkeypatch.undo()


@pytest.fixture(scope="module")
def scale():
    return load_problem(CHEATS / "problems" / "c" / "scale-small")


@pytest.fixture(scope="module")
def on_core(pinned, scale):
    return pinned.evaluate(scale, ONLY_ON_CORE, "c")


@needs_two_cores
def test_the_runner_serves_its_job_on_the_timing_core_and_this_process_stays_off_it(pinned):
    job = Job(kind="pytorch", device="cpu", candidate_source="", candidate_language="python", configs=[],
              init_seed=0, mode="info")
    outcome = pinned.pool.run(job)
    assert outcome.status == "ok" and outcome.raw["cpus"] == [CORE]
    assert outcome.host.cores == [CORE] and outcome.host.exclusive
    assert CORE not in os.sched_getaffinity(0)


@needs_two_cores
def test_a_candidate_right_only_on_the_timing_core_is_correct_there(on_core):
    assert on_core.verdict == Verdict.CORRECT, on_core.message
    assert on_core.candidate_us is not None


@needs_two_cores
def test_a_timed_evaluation_records_its_core_and_says_so(on_core):
    host = on_core.host
    assert host.cores == [CORE] and host.exclusive and host.window == "timing" and host.setup
    assert any(note.startswith(f"timed on core {CORE} (exclusive)") for note in on_core.notes)


@needs_two_cores
@pytest.mark.parametrize(("cheat", "verdict"), [("c_partial.c", Verdict.INCORRECT),
                                                ("c_segfault.c", Verdict.RUNTIME_ERROR)])
def test_evaluations_that_never_timed_still_record_where_they_ran(pinned, scale, cheat, verdict):
    result = pinned.evaluate(scale, (CHEATS / cheat).read_text(), "c")
    assert result.verdict == verdict and result.host is not None
    assert result.host.cores == [CORE] and result.host.window == "job"


@needs_two_cores
def test_the_stored_evaluation_keeps_the_host_record(on_core, refinery_home):
    from engine.store.evaluation import latest_result, store_evaluation

    candidate_id, _ = store_evaluation(on_core, problem_slug="scale-small", source=ONLY_ON_CORE, language="c")
    assert latest_result(candidate_id).host == on_core.host


@needs_two_cores
def test_a_candidate_that_widens_its_own_cores_is_recorded_as_not_exclusive(pinned, scale):
    result = pinned.evaluate(scale, WIDENS_ITS_CORES, "c")
    assert result.verdict == Verdict.CORRECT, result.message
    assert result.host.cores == USABLE and not result.host.exclusive
    assert any(note.startswith("timed on shared cores") for note in result.notes)
