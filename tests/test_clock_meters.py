"""The kernel's accounting around a timing block: waiting for a core is left out of the judge's clock only
where the job's own processes cannot explain it, read through descriptors opened outside the sandbox."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from engine.sandbox import SandboxSpec, boundary, spawn
from engine.sandbox.accounting import host_pid, open_job_meters
from engine.verify.judge.clock import Block, corroborate
from engine.verify.judge.meters import OwnMeter, Reading, RunnerMeter, waited_us

REPO = Path(__file__).resolve().parents[1]
where = boundary()


def test_waiting_another_program_caused_is_left_out_and_waiting_the_jobs_own_threads_caused_is_not():
    before = Reading(main_cpu_ns=0, main_wait_ns=0, job_cpu_ns=0)
    other_program = Reading(main_cpu_ns=5_000_000, main_wait_ns=3_000_000, job_cpu_ns=5_000_000)
    assert waited_us(before, other_program) == pytest.approx(3000.0)
    own_helper = Reading(main_cpu_ns=5_000_000, main_wait_ns=3_000_000, job_cpu_ns=8_000_000)  # it ran 3 ms
    assert waited_us(before, own_helper) == 0.0
    partly = Reading(main_cpu_ns=5_000_000, main_wait_ns=3_000_000, job_cpu_ns=6_000_000)
    assert waited_us(before, partly) == pytest.approx(2000.0)
    assert waited_us(None, other_program) == 0.0 and waited_us(before, None) == 0.0


def _blocks(claimed_us: float, clock_us: float, waited_us: float = 0.0, metered: bool = True) -> list[Block]:
    return [Block([claimed_us] * 30, clock_us * 30, waited_us * 30, metered) for _ in range(3)]


def test_a_loaded_machines_waiting_no_longer_counts_against_an_honest_claim():
    baseline = _blocks(claimed_us=3000.0, clock_us=5500.0, waited_us=500.0)  # 2 ms of flush per trial
    loaded = _blocks(claimed_us=3000.0, clock_us=14000.0, waited_us=9000.0)  # 9 ms a trial behind other programs
    assert not corroborate(_blocks(3000.0, 14000.0, metered=False), _blocks(3000.0, 5500.0, metered=False),
                           round_trip_us=100.0, clock="perf-counter").ok
    verdict = corroborate(loaded, baseline, round_trip_us=100.0, clock="perf-counter", quiet_overhead_us=2400.0)
    assert verdict.ok and verdict.waited_us == pytest.approx(9000.0) and "waiting for a core" in verdict.detail


def test_a_busy_machine_with_no_quiet_timing_of_the_work_credits_no_speed_and_rejects_nothing():
    """As a fresh judge saw it beside a full test run on 2 cores: the candidate waiting a fifth of its blocks for a
    core, the judge's loop slowed to 5988 µs a trial (2749 of them the flush), 851 µs of hidden work a trial within
    the 1057 allowed. Without a quiet timing of the same work the slowed loop cannot be told from a quiet one, so
    neither the attack nor an honest claim timed the same way earns a speed; neither is called a violation."""
    baseline = _blocks(claimed_us=52.0, clock_us=52.0 + 5988.0 + 400.0, waited_us=400.0)
    hidden = _blocks(claimed_us=52.0, clock_us=52.0 + 5988.0 + 851.0 + 1872.0, waited_us=1872.0)
    honest = _blocks(claimed_us=52.0, clock_us=52.0 + 5988.0 + 40.0 + 1872.0, waited_us=1872.0)
    for blocks in (hidden, honest):
        verdict = corroborate(blocks, baseline, round_trip_us=100.0, clock="perf-counter", flush_us=2749.0)
        assert not verdict.ok and not verdict.decided and not verdict.steady
        assert "no quiet timing of this work" in verdict.detail and "no speed is credited" in verdict.detail
    quiet = corroborate(hidden, baseline, round_trip_us=100.0, clock="perf-counter", flush_us=2749.0,
                        quiet_overhead_us=2900.0)  # the same work's loop on a quiet machine
    assert not quiet.ok and not quiet.decided and "its quietest on this work" in quiet.detail
    still = corroborate(honest, baseline, round_trip_us=100.0, clock="perf-counter", flush_us=2749.0,
                        quiet_overhead_us=5900.0)  # the loop no slower than its quietest: the allowance stands
    assert still.ok and still.decided


def test_only_a_steady_timing_becomes_the_works_quiet_floor():
    from engine.verify.judge import clock

    work = ("test", "floor", uuid.uuid4().hex)
    busy_baseline = _blocks(claimed_us=52.0, clock_us=52.0 + 5988.0 + 400.0, waited_us=400.0)
    busy = _blocks(claimed_us=52.0, clock_us=52.0 + 5988.0 + 1872.0, waited_us=1872.0)
    clock.corroborate_work(work, busy, busy_baseline, 100.0, "perf-counter", 2749.0)
    assert clock.QUIET_LOOPS.quietest(work) is None
    steady_baseline = _blocks(claimed_us=52.0, clock_us=52.0 + 2900.0)
    steady = clock.corroborate_work(work, _blocks(52.0, 52.0 + 2920.0), steady_baseline, 100.0, "perf-counter",
                                    1200.0)
    assert steady.ok and clock.QUIET_LOOPS.quietest(work) == pytest.approx(2900.0)


def test_time_the_process_spent_asleep_or_spinning_elsewhere_still_counts():
    baseline = _blocks(claimed_us=3000.0, clock_us=5500.0, waited_us=500.0)
    sleeper = _blocks(claimed_us=30.0, clock_us=5500.0, waited_us=200.0)  # 3 ms a call hidden from its own timer
    verdict = corroborate(sleeper, baseline, round_trip_us=100.0, clock="perf-counter")
    assert not verdict.ok and verdict.unexplained_us > 2500


def test_a_timer_running_at_seventy_percent_is_caught_where_waiting_is_metered_and_an_honest_one_is_not():
    """A 10 ms kernel claimed as 7 ms (figures as measured on an idle 2-core machine, 1.3 ms of loop per
    trial): unmetered, half the claim was allowed and the shaving passed; metered, the claim's share is small."""
    baseline = _blocks(claimed_us=3000.0, clock_us=4300.0)
    shaved = dict(claimed_us=7000.0, clock_us=11300.0)  # 3 ms of the kernel hidden a trial
    assert corroborate(_blocks(**shaved, metered=False), _blocks(3000.0, 4300.0, metered=False),
                       round_trip_us=100.0, clock="perf-counter").ok
    assert not corroborate(_blocks(**shaved), baseline, round_trip_us=100.0, clock="perf-counter").ok
    honest = _blocks(claimed_us=10000.0, clock_us=11300.0 + 0.1 * 10000.0)  # a tenth of the claim beside the loop
    assert corroborate(honest, baseline, round_trip_us=100.0, clock="perf-counter").ok


def test_one_stalled_block_is_noise_and_work_hidden_in_most_blocks_is_not():
    """As seen after an attack's tear-down: one block of an honest timing 280 µs a trial slower, unmetered."""
    baseline = _blocks(claimed_us=150.0, clock_us=170.0)
    honest, stalled = Block([150.0] * 20, 170.0 * 20), Block([150.0] * 20, (170.0 + 800.0) * 20)
    verdict = corroborate([honest, stalled, honest], baseline, round_trip_us=10.0, clock="perf-counter")
    assert verdict.ok and verdict.median_block and "median block" in verdict.detail
    assert verdict.clock_us > 400  # the whole timing's clock is still what it saw
    hiding = Block([150.0] * 20, (170.0 + 800.0) * 20)
    assert not corroborate([hiding, hiding, honest], baseline, round_trip_us=10.0, clock="perf-counter").ok
    assert not corroborate([stalled, stalled], _blocks(150.0, 170.0), round_trip_us=10.0, clock="perf-counter").ok


def test_the_runners_meter_reads_both_cgroup_formats(tmp_path):
    schedstat = tmp_path / "schedstat"
    schedstat.write_text("123456 7890 12\n")
    v1 = tmp_path / "cpuacct.usage"
    v1.write_text("999000\n")
    v2 = tmp_path / "cpu.stat"
    v2.write_text("usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n")
    fds = [os.open(p, os.O_RDONLY) for p in (schedstat, v1, v2)]
    try:
        assert RunnerMeter(fds, {"schedstat": 0, "job_cpu": 1, "job_cpu_format": "v1"}).read() == \
            Reading(123456, 7890, 999000)
        assert RunnerMeter(fds, {"schedstat": 0, "job_cpu": 2, "job_cpu_format": "v2"}).read() == \
            Reading(123456, 7890, 1_500_000)
        v2.write_text("nr_periods 0\n")  # a file without the field: no reading, never a guess
        assert RunnerMeter(fds, {"schedstat": 0, "job_cpu": 2, "job_cpu_format": "v2"}).read() is None
    finally:
        for fd in fds:
            os.close(fd)


@pytest.mark.skipif(not Path("/proc/thread-self/schedstat").exists(), reason="no schedstat on this kernel")
def test_the_judges_own_meter_counts_its_threads():
    own = OwnMeter()
    first = own.read()
    deadline = time.perf_counter() + 0.05
    while time.perf_counter() < deadline:
        pass
    second = own.read()
    assert first is not None and second is not None
    ran_or_waited = (second.main_cpu_ns + second.main_wait_ns) - (first.main_cpu_ns + first.main_wait_ns)
    assert ran_or_waited >= 40_000_000 and second.job_cpu_ns >= second.main_cpu_ns  # of its 50 ms, however loaded


@pytest.mark.skipif(not where.namespaced or where.cgroup is None, reason="no namespaced sandbox with a job cgroup")
def test_the_pool_opens_a_sandboxed_jobs_accounting_from_outside(tmp_path):
    code = textwrap.dedent("""
        import os, sys, time
        print(os.getpid(), flush=True)
        sys.stdin.readline()
        deadline = time.perf_counter() + 0.2
        while time.perf_counter() < deadline:
            pass
        print("done", flush=True)
        sys.stdin.readline()
    """)
    with spawn(SandboxSpec(argv=[sys.executable, "-S", "-c", code], scratch=tmp_path / "scratch", hidden=[REPO]),
               stdin=subprocess.PIPE, stdout=subprocess.PIPE) as job:
        inner = int(job.popen.stdout.readline())
        assert host_pid(job, inner) not in (None, inner)  # inside its own PID namespace
        assert host_pid(job, inner + 1000) is None and open_job_meters(job, inner + 1000) is None
        meters = open_job_meters(job, inner)
        assert meters is not None
        try:
            meter = RunnerMeter(meters.fds, meters.layout)
            before = meter.read()
            job.popen.stdin.write(b"go\n")
            job.popen.stdin.flush()
            assert job.popen.stdout.readline().strip() == b"done"
            after = meter.read()
            assert before is not None and after is not None
            busy = (after.main_cpu_ns + after.main_wait_ns) - (before.main_cpu_ns + before.main_wait_ns)
            assert busy >= 150_000_000  # its 0.2 s of spinning (on a core or waiting for one), seen from outside
            assert after.job_cpu_ns - before.job_cpu_ns >= after.main_cpu_ns - before.main_cpu_ns - 10_000_000
        finally:
            meters.close()
        job.popen.stdin.write(b"end\n")
        job.popen.stdin.flush()


def test_a_gpu_slot_pauses_its_warming_runners_and_judge_for_a_timing_and_a_cpu_slot_does_not():
    from types import SimpleNamespace

    from engine.verify.pool import Slot

    calls: list[str] = []
    job = SimpleNamespace(pause=lambda: calls.append("pause"), resume=lambda: calls.append("resume"))
    slot = Slot.__new__(Slot)
    slot.gate_lock, slot.timing = threading.Lock(), False
    importing = SimpleNamespace(job=job, alive=True, gate="imported", let_onto_gpu=lambda: calls.append("let on"))
    slot.spares = [SimpleNamespace(job=job, alive=True, gate="open"),
                   SimpleNamespace(job=job, alive=False, gate="open"),
                   importing]  # still importing: no GPU work until the timing ends, so it keeps going
    slot.spare_judge = SimpleNamespace(job=job, alive=True)  # warming for the next problem: a CUDA context too
    slot.device = "cpu"
    assert slot.pause_spares() == [] and calls == []
    slot.device = "cuda"
    paused = slot.pause_spares()
    assert len(paused) == 2 and calls == ["pause", "pause"] and slot.timing
    slot.resume_spares(paused)
    assert calls == ["pause", "pause", "resume", "resume", "let on"] and paused == [] and not slot.timing


IDLE_HELPERS_PROBE = """
import time, torch
from engine.verify.judge.meters import OwnMeter
torch.set_num_threads(2)
x = torch.randn(1 << 18)
def helpers_ns():
    reading = OwnMeter().read()
    return reading.job_cpu_ns - reading.main_cpu_ns
x * (x > 0)
first, started = helpers_ns(), time.perf_counter()
for _ in range(40):
    x * (x > 0)
    time.sleep(0.005)
print((helpers_ns() - first) / 1e9 / (time.perf_counter() - started))
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2 or not os.path.isdir("/proc/self/task"), reason="needs /proc and 2 cores")
def test_the_timed_processes_idle_thread_pool_sleeps_so_the_jobs_cpu_time_is_work(monkeypatch, tmp_path):
    """Where a timed process's OpenMP helpers spin between calls, their CPU time counts as the job's own and
    the clock check keeps the main thread's wait for a core held by another program on the clock."""
    from engine.verify import pool

    started: list[SandboxSpec] = []

    def capture(spec, **_kwargs):
        started.append(spec)
        raise RuntimeError("captured")

    monkeypatch.setattr(pool, "spawn", capture)
    config = pool.PoolConfig.from_settings(scratch_root=tmp_path)
    for start in (lambda: pool.RunnerProcess(config, None, "cpu"), lambda: pool.JudgeProcess(config, None, "cpu")):
        with pytest.raises(RuntimeError, match="captured"):
            start()
    assert [spec.role for spec in started] == ["runner", "judge"]
    assert all(spec.env.get(k) == v for spec in started for k, v in pool.TIMED_PROCESS_ENV.items())

    probe = subprocess.run([sys.executable, "-c", IDLE_HELPERS_PROBE], capture_output=True, text=True, timeout=120,
                           check=True, cwd=REPO, env={**os.environ, **pool.TIMED_PROCESS_ENV})
    share = float(probe.stdout)
    assert share < 0.5, f"idle helpers used {share:.0%} of a core between calls"


def test_a_machine_with_every_core_taken_leaves_an_unexplained_claim_undecided_and_a_quiet_one_fails_it():
    """As on a two-core machine beside a full test run: the honest runner's thread never waited, yet its loop's
    memory-bound steps ran 400-600 µs a trial slower than the judge's; the kernel's CPU pressure count saw the
    other core taken."""
    baseline = _blocks(claimed_us=180.0, clock_us=1055.0)
    slow = [Block([180.0] * 10, (180.0 + 875.0 + 600.0) * 10, 0.0, True) for _ in range(3)]
    quiet = corroborate(slow, baseline, round_trip_us=50.0, clock="perf-counter")
    assert not quiet.ok and quiet.decided and not quiet.busy
    stalled = [Block(b.times_us, b.wall_us, 0.0, True, stalled_us=0.3 * b.wall_us) for b in slow]
    busy = corroborate(stalled, baseline, round_trip_us=50.0, clock="perf-counter")
    assert not busy.ok and not busy.decided
    assert "other programs waited for a core 30% of the candidate's blocks" in busy.detail
    assert "no speed is credited" in busy.detail
    little = [Block(b.times_us, b.wall_us, 0.0, True, stalled_us=0.02 * b.wall_us) for b in slow]
    assert corroborate(little, baseline, round_trip_us=50.0, clock="perf-counter").decided


def test_the_pressure_count_reads_the_kernels_file_and_leaves_out_what_the_job_itself_ran(tmp_path, monkeypatch):
    from engine.verify.judge import meters

    cpu = tmp_path / "cpu"
    cpu.write_text("some avg10=0.83 avg60=2.35 avg300=2.63 total=2734480\nfull avg10=0.00 total=0\n")
    monkeypatch.setattr(meters, "PRESSURE_FILE", str(cpu))
    assert meters.stalled_us() == 2734480
    start = Reading(main_cpu_ns=0, main_wait_ns=0, job_cpu_ns=0)
    alone = Reading(main_cpu_ns=1_000_000, main_wait_ns=0, job_cpu_ns=1_000_000)
    helpers = Reading(main_cpu_ns=1_000_000, main_wait_ns=0, job_cpu_ns=1_200_000)  # its own threads ran 200 µs
    assert meters.stalled_by_others_us(100.0, 400.0, start, alone, wall_us=1000.0) == 300.0
    assert meters.stalled_by_others_us(100.0, 400.0, start, helpers, wall_us=1000.0) == 100.0
    assert meters.stalled_by_others_us(100.0, 400.0, start, alone, wall_us=250.0) == 250.0  # at most the wall
    assert meters.stalled_by_others_us(None, 400.0, start, alone, wall_us=250.0) == 0.0
    assert meters.stalled_by_others_us(100.0, 400.0, None, alone, wall_us=250.0) == 0.0  # unmetered: not used
    monkeypatch.setattr(meters, "PRESSURE_FILE", str(tmp_path / "absent"))
    assert meters.stalled_us() is None


def test_the_runners_own_account_of_a_slow_loop_withholds_speed_and_never_passes_a_forged_timer():
    """As in the C placement test's honest control on two cores: 600 µs a trial more on the judge's clock
    than the judge's own loop, no waiting or pressure counted, and the runner's own clock around its block
    saw the same time in its untimed steps."""
    baseline = _blocks(claimed_us=190.0, clock_us=1230.0)
    slow_loop = [Block([190.0] * 30, 2080.0 * 30, 0.0, True, reported_loop_us=2050.0 * 30) for _ in range(3)]
    verdict = corroborate(slow_loop, baseline, round_trip_us=50.0, clock="perf-counter")
    assert not verdict.ok and not verdict.decided, verdict.detail
    assert "own untimed steps took" in verdict.detail and "no speed is credited" in verdict.detail
    # the same wall time with a runner whose own clock saw only the loop the judge has: time it cannot account for
    forged = [Block([190.0] * 30, 2080.0 * 30, 0.0, True, reported_loop_us=1250.0 * 30) for _ in range(3)]
    failed = corroborate(forged, baseline, round_trip_us=50.0, clock="perf-counter")
    assert not failed.ok and failed.decided and not failed.busy
    # unreported (an older runner, a reply without it) decides as before
    unreported = [Block(b.times_us, b.wall_us, 0.0, True) for b in slow_loop]
    assert corroborate(unreported, baseline, round_trip_us=50.0, clock="perf-counter").decided
    # on a GPU the events and the host clock differ by the hidden work itself: the account explains nothing there
    on_gpu = corroborate(slow_loop, baseline, round_trip_us=50.0, clock="cuda-events")
    assert not on_gpu.ok and on_gpu.decided


def test_work_hidden_behind_a_slowed_judge_loop_earns_no_speed_and_a_quiet_judge_still_passes_honest_work():
    """As seen once on the CPU: a kernel worker at 100 % of a core slowed the judge's own loop evenly (no spread
    between its blocks, no wait its meters count), by about as much as the attack hid beside the flush, and the
    attack passed at 3.3×. Read against the judge's quietest loop on the same work, it is left undecided."""
    from engine.verify.judge.clock import QuietLoops

    quiet_loop, slowed_loop = 1000.0, 2300.0  # the judge's loop a trial: before, and while the worker ran
    baseline = _blocks(claimed_us=500.0, clock_us=500.0 + slowed_loop, metered=False)
    hiding = _blocks(claimed_us=500.0, clock_us=500.0 + quiet_loop + 1200.0, metered=False)  # 1.2 ms hidden a trial
    assert corroborate(hiding, baseline, round_trip_us=0.0, clock="perf-counter").ok  # the hole, without a floor
    verdict = corroborate(hiding, baseline, round_trip_us=0.0, clock="perf-counter", quiet_overhead_us=quiet_loop)
    assert not verdict.ok and not verdict.decided
    assert "more than its quietest on this work" in verdict.detail and "no speed is credited" in verdict.detail
    quiet = _blocks(claimed_us=500.0, clock_us=500.0 + quiet_loop, metered=False)
    honest = _blocks(claimed_us=500.0, clock_us=500.0 + quiet_loop + 30.0, metered=False)
    assert corroborate(honest, quiet, round_trip_us=0.0, clock="perf-counter", quiet_overhead_us=quiet_loop).ok
    slightly = _blocks(claimed_us=500.0, clock_us=500.0 + 1.1 * quiet_loop, metered=False)  # within 20 %: noise
    assert corroborate(hiding, slightly, round_trip_us=0.0, clock="perf-counter",
                       quiet_overhead_us=quiet_loop).ok is False  # over the allowance as it always was
    assert corroborate(honest, slightly, round_trip_us=0.0, clock="perf-counter", quiet_overhead_us=quiet_loop).ok
    gpu = corroborate(hiding, baseline, round_trip_us=0.0, clock="cuda-events", quiet_overhead_us=quiet_loop)
    assert gpu.decided  # the GPU's clock keeps its measured rule
    loops = QuietLoops()
    loops.saw(("w",), 2300.0), loops.saw(("w",), 1000.0), loops.saw(("w",), 1800.0), loops.saw(("w",), 0.0)
    assert loops.quietest(("w",)) == 1000.0 and loops.quietest(("other",)) is None


def test_quiet_floors_survive_export_and_seed_and_nothing_malformed_is_taken():
    from engine.verify.judge.clock import QuietLoops

    first, second = QuietLoops(), QuietLoops()
    first.saw(("pytorch", "ref", "large", "perf-counter"), 900.0)
    first.saw(("pytorch", "ref", "large", "perf-counter"), 700.0)
    second.seed([*first.export(), "junk", [["x"], "700"], [["y"], float("inf")], [["z", 3], 1.0]])
    assert second.export() == [[["pytorch", "ref", "large", "perf-counter"], 700.0]]
    second.seed([[["pytorch", "ref", "large", "perf-counter"], 950.0]])  # a slower loop never raises the floor
    assert second.quietest(("pytorch", "ref", "large", "perf-counter")) == 700.0
    second.seed({"not": "a list"})
    assert len(second.export()) == 1
