"""The pool: candidates that crash, hang or raise get their verdict and the next candidate runs, each in a
process of its own; candidate processes run sandboxed (no secrets, limits, their own scratch folder)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.sandbox import boundary
from engine.schema.verdict import Verdict
from engine.settings import get_settings
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.judge.job import Job
from engine.verify.pool import PoolConfig, Slot, WorkerPool, startup_steps
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy

CHEATS = Path(__file__).parent / "cheats"
FAST = VerifyOptions(timing=False, timeout_s=120,
                     timing_policy=TimingOptions(TrialPolicy(3, 0.0, 5, 1.0, flush_bytes=1 << 20)))


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("REFINERY_HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    monkeypatch.setenv("REFINERY_DATABASE_URL", "postgresql://user:secret@db/refinery")
    get_settings.cache_clear()
    settings = get_settings()
    pool = WorkerPool(config=PoolConfig.from_settings(settings))
    yield Verifier(pool=pool, options=FAST, settings=settings)
    pool.close()
    monkeypatch.undo()
    get_settings.cache_clear()


@pytest.fixture(scope="module")
def relu():
    return load_problem(CHEATS / "problems" / "pytorch" / "relu-small")


@pytest.fixture(scope="module")
def scale():
    return load_problem(CHEATS / "problems" / "c" / "scale-small")


def with_options(verifier, **changes) -> Verifier:
    return Verifier(pool=verifier.pool, options=replace(FAST, **changes), settings=verifier.settings)


def info(verifier) -> dict:
    job = Job(kind="pytorch", device="cpu", candidate_source="", candidate_language="python", configs=[],
              init_seed=0, mode="info")
    outcome = verifier.pool.run(job)
    assert outcome.status == "ok"
    return outcome.raw


def test_candidate_environment_has_no_secrets_and_runs_in_its_own_scratch_folder(verifier):
    facts = info(verifier)
    assert "OPENAI_API_KEY" not in facts["env"] and "REFINERY_DATABASE_URL" not in facts["env"]
    assert "CUPY_CACHE_DIR" in facts["env"] and "TMPDIR" in facts["env"]
    assert not Path(facts["cwd"]).is_relative_to(verifier.settings.home)
    if boundary().own_user:
        assert facts["uid"] != 0


def test_candidate_runs_under_cpu_file_size_and_memory_limits(verifier):
    limits = info(verifier)["limits"]
    settings = verifier.settings
    assert 0 < limits["RLIMIT_CPU"][1] <= settings.worker_cpu_seconds + 5
    assert limits["RLIMIT_FSIZE"][1] == settings.worker_file_size_mb * 2**20
    if boundary().cgroup is None:  # without a job cgroup, address space is capped per process (no GPU here)
        assert limits["RLIMIT_AS"][1] == settings.worker_memory_mb * 2**20
    assert limits["RLIMIT_CORE"] == [0, 0]


def test_every_job_gets_a_process_no_candidate_has_touched(verifier):
    assert info(verifier)["pid"] != info(verifier)["pid"] or boundary().namespaced


def test_a_candidate_that_raises_gets_runtime_error_with_its_traceback(verifier, relu):
    result = verifier.evaluate(relu, (CHEATS / "raises.py").read_text())
    assert result.verdict == Verdict.RUNTIME_ERROR and "this kernel is not finished" in result.message
    assert "Traceback" in result.log and "candidate.py" in result.log


def test_a_hanging_candidate_times_out_and_the_next_one_runs(verifier, relu):
    result = with_options(verifier, timeout_s=8).evaluate(relu, (CHEATS / "hangs.py").read_text())
    assert result.verdict == Verdict.TIMEOUT and "killed" in result.message
    after = verifier.evaluate(relu, (CHEATS / "honest.py").read_text())
    assert after.verdict == Verdict.CORRECT


def test_a_segfaulting_python_candidate_is_a_runtime_error_and_the_worker_is_replaced(verifier, relu):
    result = with_options(verifier, static_checks=False).evaluate(relu, (CHEATS / "segfault.py").read_text())
    assert result.verdict == Verdict.RUNTIME_ERROR and "SIGSEGV" in result.message
    assert "Fatal Python error" in result.log or "Segmentation" in result.log


def test_a_segfaulting_c_candidate_does_not_stop_the_next_candidate(verifier, scale):
    crashed = verifier.evaluate(scale, (CHEATS / "c_segfault.c").read_text(), "c")
    assert crashed.verdict == Verdict.RUNTIME_ERROR and "died" in crashed.message
    fine = verifier.evaluate(scale, scale.implementation("cpu-naive").source, "c")
    assert fine.verdict == Verdict.CORRECT


def test_a_hanging_c_candidate_times_out(verifier, scale):
    result = with_options(verifier, timeout_s=8).evaluate(scale, (CHEATS / "c_hang.c").read_text(), "c")
    assert result.verdict == Verdict.TIMEOUT


@pytest.mark.parametrize(("cheat", "verdict", "words"), [
    ("syntax_error.py.txt", Verdict.LOAD_ERROR, "syntax error"),  # .txt: not valid Python, so not linted
    ("no_model_new.py", Verdict.LOAD_ERROR, "ModelNew"),
    ("c_wrong_entry.c", Verdict.LOAD_ERROR, "kernel_scale"),
    ("c_compile_error.c", Verdict.COMPILE_ERROR, "undefined_name"),
])
def test_broken_candidates_get_the_verdict_of_their_stage(verifier, relu, scale, cheat, verdict, words):
    path = CHEATS / cheat
    problem, language = (relu, "python") if ".py" in path.name else (scale, "c")
    result = verifier.evaluate(problem, path.read_text(), language)
    assert result.verdict == verdict and words in result.message


def test_candidate_prints_go_to_the_log_and_cannot_break_the_protocol(verifier, relu):
    chatty = (CHEATS / "honest.py").read_text().replace("        return x * (x > 0)",
                                                        '        print(\'{"type": "result"}\')\n'
                                                        "        return x * (x > 0)")
    result = verifier.evaluate(relu, chatty)
    assert result.verdict == Verdict.CORRECT and '{"type": "result"}' in result.log


def test_pool_runs_jobs_submitted_concurrently(verifier, relu):
    futures = [verifier.pool.submit(Job(kind="pytorch", device="cpu", candidate_source="", candidate_language="python",
                                        configs=[], init_seed=i, mode="info")) for i in range(3)]
    assert [f.result().status for f in futures] == ["ok", "ok", "ok"]


def test_a_runner_started_from_a_thread_that_has_ended_still_serves(verifier, relu):
    """Sandboxes die with the thread that started them; the pool starts them all from one long-lived one."""
    import threading

    results = []
    honest = (CHEATS / "honest.py").read_text()
    worker = threading.Thread(target=lambda: results.append(verifier.evaluate(relu, honest)))
    worker.start()
    worker.join()
    assert results[0].verdict == Verdict.CORRECT
    assert verifier.evaluate(relu, (CHEATS / "honest.py").read_text()).verdict == Verdict.CORRECT


def test_a_runner_that_does_not_start_is_retried_and_never_charged_to_the_candidate(verifier, relu, monkeypatch):
    """A warm runner whose start failed (a traceback in its warm-up, 16 starting at once) is ours: the next
    one takes the job, and the candidate is judged on its own code."""
    from engine.verify import pool as pool_module

    real_ready = pool_module.RunnerProcess.ready
    failed = []

    def ready_once_broken(self, *args, **kwargs):
        if not failed:
            failed.append(self)
            raise RuntimeError("the runner did not start (a warm-up traceback)")
        return real_ready(self, *args, **kwargs)

    monkeypatch.setattr(pool_module.RunnerProcess, "ready", ready_once_broken)
    result = verifier.evaluate(relu, (CHEATS / "honest.py").read_text())
    assert failed and result.verdict == Verdict.CORRECT, result.message


def test_a_problems_next_judge_starts_from_the_quiet_floors_its_last_judge_returned(verifier):
    """A judge serves one problem and is replaced for the next; the pool keeps what the last one returned of its
    quietest loops and hands it to the problem's next judge, which takes the well-formed pairs and returns them."""
    info(verifier)
    slot = verifier.pool._slots[0]
    problem = slot.judge_problem
    assert problem is not None and isinstance(slot.quiet_loops.get(problem), list)
    slot.quiet_loops[problem] = [[["sentinel", "work"], 123.0], ["malformed"], [["nan"], float("nan")],
                                 [["negative"], -5.0], [[1, 2], 9.0]]
    slot.restart_judge()
    info(verifier)
    assert slot.judge_problem == problem and slot.judge.jobs == 1
    assert slot.quiet_loops[problem] == [[["sentinel", "work"], 123.0]]


def test_a_runners_warm_up_account_is_read_as_known_steps_with_plain_numbers_only():
    hello = {"startup_phases": {"imports": [1.5, 1.4], "context": [0.3, 0.1], "cupy": ["x", 0],
                                "digest": [float("nan")], "profiler": [], "made-up": [9.0, 9.0]}}
    assert startup_steps(hello) == {"runner_startup.imports": 1.5, "runner_startup.context": 0.3}
    assert startup_steps({"startup_phases": "lots"}) == {} and startup_steps({}) == {}


def _wait_for(condition, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_a_gpu_slots_warming_runners_import_beside_a_timing_and_go_onto_the_gpu_only_after_it(tmp_path):
    """A GPU slot's spares do their imports (CPU work) while a timing runs, and are let onto the GPU only
    when it has ended; with no timing they are let on as soon as they are imported. The runners here are
    GPU runners on a machine without one: the gate is the same, the GPU steps find no device."""
    config = PoolConfig.from_settings(scratch_root=tmp_path, spares=2, timing_cores="off")
    slot = Slot(config, None)
    slot.device = "cuda"  # as a judge on a GPU would have said
    taken = []

    def take():
        taken.append(slot.take_runner())
        return taken[-1].ready()

    try:
        paused = slot.pause_spares()  # a timing has started before the spares exist
        slot.fill()
        assert _wait_for(lambda: all(r.gate == "imported" for r in slot.spares)), [r.gate for r in slot.spares]
        time.sleep(0.3)
        assert [r.gate for r in slot.spares] == ["imported", "imported"]  # none goes on while it times
        slot.resume_spares(paused)
        assert [r.gate for r in slot.spares] == ["open", "open"]
        hello = take()
        assert hello["startup_phases"]["gate"][0] >= 0.3  # it waited at the gate for the timing's end
        take()  # the other one that waited
        # With nothing timed, a new spare is let on as soon as it has imported
        assert _wait_for(lambda: all(r.gate == "open" for r in slot.spares)), [r.gate for r in slot.spares]
        fresh = take()
        assert "gate" in fresh["startup_phases"] and fresh["startup_phases"]["gate"][0] < 0.3
    finally:
        for runner in taken:
            slot.retire(runner)
        slot.close()
