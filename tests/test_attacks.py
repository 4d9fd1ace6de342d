"""Attacks on the verifier itself, run as an attacker would: a data folder with a settings file holding a
team password, an API key in the environment, a database with a stored evaluation, a world-writable
folder outside the sandbox, a server listening on loopback. Each attack (tests/attacks/) must end in a
verdict that is not `correct`, with nothing it took in the result, the database and every file outside
its scratch folder untouched, nothing reaching the server, and no process of it left; the verifier goes
on judging the next candidate correctly.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.reward.score import unified_reward
from engine.sandbox import JobLimits, boundary
from engine.schema.verdict import EvaluationResult, Verdict
from engine.settings import get_settings
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.pool import PoolConfig, WorkerPool
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy

REPO = Path(__file__).resolve().parents[1]
ATTACKS = REPO / "tests" / "attacks"
CHEATS = REPO / "tests" / "cheats"
API_KEY = "sk-planted-" + uuid.uuid4().hex
TEAM_PASSWORD = "team-" + uuid.uuid4().hex
DB_PASSWORD = "dbpw-" + uuid.uuid4().hex
SECRETS = (API_KEY, TEAM_PASSWORD, DB_PASSWORD)
# Enough trials per timing block for the judge's clock to decide (tests elsewhere use fewer).
OPTIONS = VerifyOptions(timeout_s=60, timing_policy=TimingOptions(TrialPolicy(min_trials=45, min_seconds=0.0,
                                                                              max_trials=60, max_seconds=5.0,
                                                                              flush_bytes=1 << 20)))

pytestmark = pytest.mark.skipif(not boundary().namespaced,
                                reason="no OS sandbox on this machine: " + "; ".join(boundary().missing))


class Listener:
    """A server on the host's loopback that records every connection it gets."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received: list[bytes] = []
        self.running = True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(4096) or b"<connected>")
                except OSError:
                    self.received.append(b"<connected>")

    def close(self) -> None:
        self.running = False
        self.thread.join(timeout=2)
        self.sock.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("attacked")
    home = root / "home"
    home.mkdir()
    (home / "settings.toml").write_text(f'team_password = "{TEAM_PASSWORD}"\n')
    canary = root / "canary"
    canary.mkdir()
    canary.chmod(0o777)  # writable by anyone: only the sandbox can keep a candidate out
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("REFINERY_HOME", str(home))
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("REFINERY_DATABASE_URL", f"sqlite:///{home / 'refinery.db'}")
    monkeypatch.setenv("PGPASSWORD", DB_PASSWORD)
    get_settings.cache_clear()
    settings = get_settings()
    from engine.store.evaluation import store_evaluation

    stored = EvaluationResult(Verdict.INCORRECT, "stored before the attacks")
    store_evaluation(stored, problem_slug="relu-small", source="x", language="python",
                     url=settings.resolved_database_url)
    listener = Listener()
    pool = WorkerPool(config=PoolConfig.from_settings(settings))
    world = {"home": home, "canary": canary, "listener": listener, "settings": settings, "pool": pool,
             "marker": f"refinery-attack-{uuid.uuid4().hex[:10]}",
             "problems": {"py": load_problem(CHEATS / "problems" / "pytorch" / "relu-small"),
                          "c": load_problem(CHEATS / "problems" / "c" / "scale-small"),
                          "matmul": load_problem(CHEATS / "problems" / "pytorch" / "matmul-mean-small")}}
    world["rows"] = _rows(home)
    yield world
    pool.close()
    listener.close()
    monkeypatch.undo()
    get_settings.cache_clear()
    left = _sandbox_processes()
    assert left == [], f"sandboxed processes outlived the pool: {[_command_line(pid) for pid in left]}"


def _rows(home: Path) -> list:
    import sqlite3

    with sqlite3.connect(home / "refinery.db") as db:
        return db.execute("SELECT id, verdict, speedup, message FROM evaluation ORDER BY id").fetchall()


def _cmdlines() -> dict[int, str]:
    lines = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                lines[int(entry)] = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(
                    errors="replace")
            except OSError:
                continue
    return lines


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return f"{pid} (gone)"


def _sandbox_processes() -> list[int]:
    """Sandboxed processes this test process started that are still alive: those in a job cgroup it made
    (named after its pid; a process cannot leave its cgroup), or, where there is no job cgroup, any in the
    sandbox's uid range (then another verifier running on this machine at the same time would count too)."""
    from engine.sandbox.launch import UID_BASE, UID_SPAN

    ours = f"/job-{os.getpid()}-"
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if boundary().cgroup is not None:
                if ours in Path(f"/proc/{entry}/cgroup").read_text():
                    found.append(int(entry))
            elif UID_BASE <= os.stat(f"/proc/{entry}").st_uid < UID_BASE + UID_SPAN:
                found.append(int(entry))
        except OSError:
            continue
    return found


def honest(world) -> str:
    """An honest candidate for this machine: one with its own kernel on a GPU, plain torch on a CPU."""
    name = "gpu_honest.py" if world["pool"].gpu else "honest.py"
    return (CHEATS / name).read_text()


def source_of(world, name: str) -> str:
    text = (ATTACKS / name).read_text()
    for key, value in {"__HOME__": str(world["home"]), "__REPO__": str(REPO), "__PORT__": str(world["listener"].port),
                       "__MARKER__": world["marker"], "__CANARY__": str(world["canary"])}.items():
        text = text.replace(key, value)
    return text


def attack(world, name: str, problem: str = "py", language: str | None = None, verifier: Verifier | None = None,
           **options) -> EvaluationResult:
    verifier = verifier or Verifier(pool=world["pool"], options=replace(OPTIONS, **options),
                                    settings=world["settings"])
    result = verifier.evaluate(world["problems"][problem], source_of(world, name), language)
    assert_contained(world, result)
    return result


def assert_contained(world, result: EvaluationResult) -> None:
    """Nothing taken, nothing changed, nothing left: checked from the outside."""
    text = json.dumps(result.to_json())
    assert not [s for s in SECRETS if s in text], "a secret reached the verdict"
    assert "hunter" not in text and "team_password" not in text
    assert _rows(world["home"]) == world["rows"], "the database changed"
    assert list(world["canary"].iterdir()) == [], "a file was written outside the sandbox"
    assert not (world["home"] / "pwned").exists() and not (REPO / "pwned").exists()
    assert not Path(f"/tmp/{world['marker']}").exists()
    assert world["listener"].received == [], "a connection reached the host"
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        left = [pid for pid, line in _cmdlines().items() if world["marker"] in line]
        if not left:
            break
        time.sleep(0.1)
    assert not left, f"processes of the attack outlived its job: {left}"


def test_the_parents_environment_and_the_data_folder_are_out_of_reach(world):
    result = attack(world, "env_and_parent.py")
    assert result.verdict == Verdict.RUNTIME_ERROR and "LOOT:" in result.message


def test_tracing_or_reading_other_processes_memory_is_refused(world):
    result = attack(world, "ptrace_parent.py")
    assert result.verdict == Verdict.RUNTIME_ERROR and "TRACE:" in result.message
    assert "'read'" not in result.message


def test_killing_the_parent_and_everything_else_kills_nothing_outside(world):
    result = attack(world, "kill_parent.py")
    assert result.verdict != Verdict.CORRECT
    after = attack(world, "kill_parent.py")  # the judge and the pool still answer
    assert after.verdict != Verdict.CORRECT
    verifier = Verifier(pool=world["pool"], options=OPTIONS, settings=world["settings"])
    after_honest = verifier.evaluate(world["problems"]["py"], honest(world))
    assert after_honest.verdict == Verdict.CORRECT, after_honest.message


def test_the_database_and_files_outside_the_scratch_folder_are_out_of_reach(world):
    result = attack(world, "rewrite_database.py")
    assert result.verdict == Verdict.RUNTIME_ERROR and "DB:" in result.message
    assert "wrote " + str(world["canary"]) not in result.message


def test_the_library_solutions_the_judge_and_the_settings_are_invisible(world):
    result = attack(world, "read_solutions.py")
    assert result.verdict == Verdict.RUNTIME_ERROR
    assert "__global__" not in result.message and "class TorchJudge" not in result.message


def test_no_network_not_even_the_hosts_loopback(world):
    result = attack(world, "network.py")
    assert result.verdict == Verdict.RUNTIME_ERROR and "NET:" in result.message


def test_processes_started_by_a_candidate_do_not_outlive_its_job(world):
    result = attack(world, "fork_bomb.py")
    assert result.verdict != Verdict.CORRECT


@pytest.mark.skipif(boundary().cgroup is None, reason="no job cgroup on this machine")
def test_memory_split_over_children_is_limited_for_the_whole_job(world):
    config = PoolConfig.from_settings(world["settings"], limits=JobLimits(memory_mb=1536, processes=256))
    with WorkerPool(config=config) as pool:
        verifier = Verifier(pool=pool, options=OPTIONS, settings=world["settings"])
        result = attack(world, "memory_split.py", verifier=verifier)
    assert result.verdict != Verdict.CORRECT


def test_a_thread_left_behind_cannot_touch_the_next_candidate(world):
    poisoner = attack(world, "lingering_thread.py")
    assert poisoner.verdict != Verdict.CORRECT
    wrong = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 1\n"
    verifier = Verifier(pool=world["pool"], options=OPTIONS, settings=world["settings"])
    victim = verifier.evaluate(world["problems"]["py"], wrong)
    assert victim.verdict in (Verdict.INCORRECT, Verdict.INTEGRITY_VIOLATION)  # on a GPU also: no own kernel
    assert not victim.configs or not all(c.ok for c in victim.configs)
    after_honest = verifier.evaluate(world["problems"]["py"], honest(world))
    assert after_honest.verdict == Verdict.CORRECT, after_honest.message


def test_replacing_the_comparison_in_its_own_process_changes_no_verdict(world):
    result = attack(world, "replace_comparison.py")
    assert result.verdict in (Verdict.INCORRECT, Verdict.INTEGRITY_VIOLATION)
    wrong = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    after = Verifier(pool=world["pool"], options=OPTIONS, settings=world["settings"]).evaluate(
        world["problems"]["py"], wrong)
    assert after.verdict in (Verdict.INCORRECT, Verdict.INTEGRITY_VIOLATION)
    assert not all(c.ok for c in after.configs)


def test_a_patched_timer_is_caught_by_the_judges_clock(world):
    if world["pool"].gpu:
        pytest.skip("on a GPU this candidate has no kernel of its own; tests/test_attacks_gpu.py forges CUDA events")
    result = attack(world, "patch_timer.py")
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    assert _clock_refused(result) and "judge's clock" in clock.detail, clock.detail


def test_a_timer_slowed_by_a_plausible_share_is_caught_too(world):
    if world["pool"].gpu:
        pytest.skip("on a GPU this candidate has no kernel of its own; tests/test_attacks_gpu.py forges CUDA events")
    if not boundary().cgroup:
        pytest.skip("without a job cgroup the judge cannot meter waiting for a core, and allows half the claim")
    result = attack(world, "shave_timer.py")
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    assert _clock_refused(result) and "unexplained" in clock.detail, clock.detail


def test_a_forged_reply_on_the_judges_socket_is_not_a_verdict(world):
    result = attack(world, "forge_reply.py", static_checks=False)
    assert result.verdict == Verdict.RUNTIME_ERROR and result.speedup is None
    assert "8.5" not in result.message and "forged" not in result.message


def test_outputs_corrupted_on_the_runners_socket_are_the_candidates_runtime_error(world):
    result = attack(world, "corrupt_reply.py", static_checks=False)
    assert result.verdict == Verdict.RUNTIME_ERROR and result.speedup is None, result.message
    assert "malformed reply during forward on configuration" in result.message
    assert "outputs.0.tensor.shape.0: Input should be a valid integer" in result.message
    assert "verifier failed" not in result.message and "not the candidate's fault" not in result.message


def test_claimed_times_corrupted_on_the_runners_socket_are_the_candidates_runtime_error(world):
    if world["pool"].gpu:
        pytest.skip("on a GPU this candidate has no kernel of its own and is never timed")
    source = source_of(world, "corrupt_reply.py").replace('TARGET = "outputs"', 'TARGET = "times_us"')
    verifier = Verifier(pool=world["pool"], options=replace(OPTIONS, static_checks=False), settings=world["settings"])
    result = verifier.evaluate(world["problems"]["py"], source)
    assert_contained(world, result)
    assert result.verdict == Verdict.RUNTIME_ERROR and result.speedup is None, result.message
    assert "malformed reply during timing on" in result.message
    assert "times_us.0: Input should be a finite number" in result.message
    assert "verifier failed" not in result.message


def test_a_c_candidate_cannot_include_secrets_into_its_compile_log(world):
    result = attack(world, "include_secrets.c", problem="c", language="c")
    assert result.verdict == Verdict.COMPILE_ERROR
    assert "settings.toml" in result.log and "No such file" in result.log


def test_importing_a_hostile_problem_file_runs_its_code_in_the_sandbox(world, tmp_path):
    from engine.problem_import.importer import import_path

    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / "1_Hostile_ReLU.py").write_text(source_of(world, "hostile_problem.py"))
    report = import_path(upload / "1_Hostile_ReLU.py", dest_root=tmp_path / "imported")
    text = json.dumps([str(e) for e in report.errors]) + json.dumps([p.slug for p in report.imported])
    assert not [s for s in SECRETS if s in text]
    assert list(world["canary"].iterdir()) == [] and not Path(f"/tmp/{world['marker']}").exists()
    assert world["listener"].received == []
    assert _rows(world["home"]) == world["rows"]


# --- the verdict from what the judge observes: timing, fresh values, unpredictable checks ------------------

def _no_speed_earned(result: EvaluationResult) -> bool:
    return result.verdict != Verdict.CORRECT or result.speedup is None


def _clock_refused(result: EvaluationResult) -> bool:
    """The judge's clock failed the claim, or (on a machine it saw busy) could not decide and credited no speed."""
    clock = next((f for f in result.integrity if f.check == "stream-escape"), None)
    return result.speedup is None and clock is not None and (not clock.passed or "no speed is credited" in clock.detail)


def test_a_candidate_cannot_plan_its_own_timing_by_its_claims(world):
    if world["pool"].gpu:
        pytest.skip("on a GPU this candidate has no kernel of its own; tests/test_attacks_gpu.py forges calibration")
    result = attack(world, "forge_calibration.py")
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    assert _clock_refused(result), clock.detail
    assert "too few trials" not in clock.detail  # planned from the judge's clock: enough trials to decide


def test_a_c_constructor_that_replaces_the_timer_plans_nothing(world):
    result = attack(world, "c_forge_calibration.c", problem="c", language="c")
    assert _no_speed_earned(result) and _clock_refused(result), result.message


def test_work_hidden_in_the_room_the_flush_leaves_is_caught(world):
    if world["pool"].gpu:
        pytest.skip("a CPU timer: on a GPU the events decide (tests/test_attacks_gpu.py)")
    big_flush = replace(OPTIONS.timing_policy.policy, flush_bytes=32 << 20)
    result = attack(world, "hide_beside_the_flush.py", timing_policy=replace(OPTIONS.timing_policy, policy=big_flush))
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    assert _clock_refused(result) and "unexplained" in clock.detail, clock.detail


def test_remembering_answers_per_tensor_while_timed_is_caught_on_a_timed_call(world):
    result = attack(world, "memo_while_timed.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and result.speedup is None, result.message
    assert all(c.ok for c in result.configs), "the correctness calls were honest: only timed calls show it"
    timed = next(f for f in result.integrity if f.check == "timed-output")
    assert not timed.passed and "chosen after its block ran" in timed.detail, timed.detail


def test_working_only_on_the_calls_expected_to_be_checked_is_caught(world):
    result = attack(world, "compute_when_checked.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and result.speedup is None, result.message
    timed = next(f for f in result.integrity if f.check == "timed-output")
    assert not timed.passed, timed.detail


def test_a_c_cache_keyed_on_buffers_and_sampled_values_never_pays(world):
    """Every timed call sees new values, so the cache misses: either the answer is wrong, or the work was
    done and the speed is the slow loop's own (far below the plain C reference), or none is credited."""
    result = attack(world, "c_sample_cache.c", problem="c", language="c")
    assert result.verdict != Verdict.CORRECT or result.speedup is None or result.speedup < 0.5, \
        f"{result.verdict}: {result.message}"


HOSTILE_REFERENCE = '''
import sys

import torch
import torch.nn as nn

for name in ("engine.verify.judge.torch_judge", "engine.verify.judge.correctness", "engine.verify.judge.reveal"):
    module = sys.modules.get(name)
    if module is not None and hasattr(module, "compare"):
        real = module.compare

        def always_right(*args, _real=real, **kwargs):
            found = _real(*args, **kwargs)
            return type(found)(True, 0.0, 0.0)

        module.compare = always_right

batch_size = 16
dim = 64


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''


def test_a_problem_whose_reference_rewrites_the_judge_decides_nothing_about_the_next_problem(world, tmp_path):
    """A problem's code runs in the judge that judges it; the next problem gets a judge that never ran it."""
    import shutil

    hostile = tmp_path / "hostile-relu"
    shutil.copytree(CHEATS / "problems" / "pytorch" / "relu-small", hostile)
    (hostile / "reference.py").write_text(HOSTILE_REFERENCE)
    verifier = Verifier(pool=world["pool"], options=OPTIONS, settings=world["settings"])
    verifier.evaluate(load_problem(hostile, source="user"), honest(world))
    wrong = "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.clone()\n"
    after = verifier.evaluate(world["problems"]["py"], wrong)
    assert after.verdict in (Verdict.INCORRECT, Verdict.INTEGRITY_VIOLATION), after.message
    assert not all(c.ok for c in after.configs)


def test_replaying_the_reference_except_while_profiled_is_flagged_from_its_outputs(world):
    """The profile is the candidate's own report (it shows an own path, taken only while profiled); the judge
    sees the reference's rounding in the outputs it checks itself, so the speed waits for a person."""
    if world["pool"].gpu:
        pytest.skip("a CPU candidate; on a GPU the profiled path is a CUDA twin's (tests/test_attacks_gpu.py)")
    result = attack(world, "behave_when_profiled.py", problem="matmul")
    torch_op = next(f for f in result.integrity if f.check == "torch-op")
    assert torch_op.passed, "the forged profile is what this attack is about: it must clear the reported check"
    assert result.verdict == Verdict.CORRECT and result.flagged, result.message
    assert "reference's own rounding" in result.flag_reason
    assert unified_reward("correct", result.speedup or 2.0, flagged=result.flagged).speed_held is not None


def test_an_honest_kernel_summing_in_its_own_order_is_not_flagged(world):
    # Its speed is real (a matrix-vector product where the reference multiplies matrices): 10-16x over eager, and
    # over 10x the product asks a person to review the speed. That review is not what this control is about
    # (whether the judge takes its own summation order for the reference's), so it is left out here.
    result = attack(world, "honest_own_order.py", problem="matmul", recheck_suspicious=False)
    assert result.verdict == Verdict.CORRECT and not result.flagged, (result.message, result.flag_reason)
