"""A run's dynamic diagnostics without a GPU: ncu around a verified candidate (against a stand-in ncu
that reports what it was given and what it could see), the walls it runs in (the runner's sandbox),
the judge's NVML energy step, and what a round stores and shows when profiling works, fails or does
not apply."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path

import pytest

from engine.analysis.profile.ncu import NcuProfile
from engine.analysis.profile.ncu_record import NcuRecord, ncu_record
from engine.problems import get_problem
from engine.propose.base import Proposal
from engine.schema.verdict import EvaluationResult, Verdict
from engine.settings import get_settings
from engine.store.database import use_settings_database
from engine.verify.judge import energy as judge_energy
from engine.verify.judge.energy_meter import EnergyMeasurement, EnergyRecord, EnergyUnavailable
from engine.verify.judge.outcome import JobState
from tests.test_analysis_dynamic import RAW_CSV, _fake_ncu

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def settings(refinery_home, monkeypatch):
    monkeypatch.setenv("REFINERY_DATABASE_URL", f"sqlite:///{refinery_home / 'secret.db'}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-candidates")
    get_settings.cache_clear()
    use_settings_database()
    yield get_settings()
    get_settings.cache_clear()


RECORD = "==PROF== RECORD "


def _recording_ncu(tmp_path: Path, output: str = RAW_CSV, code: int = 0) -> str:
    """An ncu that reports (as one of ncu's own `==` lines, which a profile's log keeps) its arguments,
    working folder, environment, limits and what it can see, then prints `output`. It runs where the
    real one does: inside the candidate's sandbox."""
    tmp_path.chmod(0o755)  # a real profiler's folder is world-readable: the sandbox's own user runs it
    return _fake_ncu(tmp_path, f"""
import json, os, resource
def listing(path):
    try:
        return os.listdir(path)
    except OSError:
        return []
target = args[args.index("--metrics") + 2:]
target = target[target.index("-m") - 1:] if "-m" in target else target
folder = target[3]
job = os.path.join(folder, "job.json")
seen = {{"args": args, "cwd": os.getcwd(), "env": dict(os.environ), "job_existed": os.path.exists(job),
        "job": json.load(open(job)), "cpu_limit": resource.getrlimit(resource.RLIMIT_CPU)[0],
        "home_visible": bool(listing({str(tmp_path / "home")!r}))}}
print({RECORD!r} + json.dumps(seen))
print({output!r})
sys.exit({code})""")


def _recorded(log: str) -> dict | None:
    line = next((ln for ln in log.splitlines() if ln.startswith(RECORD)), None)
    return json.loads(line[len(RECORD):]) if line else None


def _use_ncu(monkeypatch, path: str) -> None:
    monkeypatch.setenv("REFINERY_NCU_PATH", path)
    get_settings.cache_clear()


def _transpose():
    problem = get_problem("matrix-transpose")
    return problem, problem.implementation("coalesced")


def test_importing_the_energy_module_loads_no_parser():
    """The GPU worker imports engine.verify.judge.energy_meter: the package must not drag tree-sitter in with it."""
    code = ("import sys, engine.verify.judge.energy_meter; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tree_sitter', 'simpleeval', 'sqlmodel')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "[]"


def test_kernel_selection_names_every_own_kernel_and_covers_one_call():
    from engine.analysis.profile.dynamic import kernel_selection
    from engine.analysis.static import analyse_candidate

    problem = get_problem("fdtd-2d")
    impl = problem.implementation("naive")
    report = analyse_candidate(problem, impl.source, impl.language)
    regex, launches = kernel_selection(report)
    names = sorted({k.name for k in report.kernels})
    assert len(names) == 3 and regex == "^(" + "|".join(names) + r")\b"
    assert launches >= 3


def test_ncu_runs_the_candidate_once_inside_the_runners_sandbox(settings, tmp_path, monkeypatch):
    import tempfile

    from engine.analysis.profile.dynamic import profile_candidate
    from engine.analysis.static import analyse_candidate
    from engine.sandbox import boundary

    _use_ncu(monkeypatch, _recording_ncu(tmp_path))
    problem, impl = _transpose()
    static = analyse_candidate(problem, impl.source, impl.language)
    before = set(Path(tempfile.gettempdir()).glob("ncu-*"))
    profile = profile_candidate(problem, impl.source, impl.language, static, settings=get_settings())
    assert profile.ok and [k.name.split("(")[0] for k in profile.kernels] == ["copy_strided", "add_naive"]
    seen = _recorded(profile.log)
    args = seen["args"]
    assert args[args.index("--clock-control") + 1] == "none" and "--csv" in args
    assert args[args.index("--kernel-name") + 1] == "regex:^(transpose_tiled)\\b"
    target = args[args.index("-m") - 1:]
    assert target[1:3] == ["-m", "engine.untrusted.runner.run_once"] and seen["job_existed"]
    assert seen["cpu_limit"] == get_settings().worker_cpu_seconds
    assert seen["job"]["config"] == problem.largest_config.name and "seed" in seen["job"]
    env = seen["env"]
    assert "OPENAI_API_KEY" not in env and not any(k.startswith("REFINERY_") for k in env)
    assert not seen["home_visible"] or not boundary().namespaced
    if boundary().namespaced:
        assert seen["cwd"] == "/scratch" and env["CUPY_CACHE_DIR"] == "/scratch/cupy"
    assert set(Path(tempfile.gettempdir()).glob("ncu-*")) == before, "the scratch folder outlived the profile"


def test_a_candidate_that_does_not_build_is_not_profiled(settings, tmp_path, monkeypatch):
    from engine.analysis.profile.dynamic import profile_candidate
    from engine.analysis.static import analyse_candidate

    _use_ncu(monkeypatch, _recording_ncu(tmp_path))
    problem, impl = _transpose()
    static = analyse_candidate(problem, impl.source, impl.language)
    broken = impl.source.replace("__global__", "__global__ this does not parse", 1)
    profile = profile_candidate(problem, broken, impl.language, static, settings=get_settings())
    assert not profile.ok and "does not build" in profile.reason and _recorded(profile.log or "") is None


def test_run_once_runs_in_the_runners_sandbox_under_its_limits(settings, tmp_path):
    from engine.sandbox import JobLimits
    from engine.verify.once import run_once
    from engine.verify.prepare import write_run_once_folder

    problem = get_problem("relu")
    source = textwrap.dedent("""
        import os
        import resource
        import torch

        class ModelNew(torch.nn.Module):
            def __init__(self):
                super().__init__()
                soft, _ = resource.getrlimit(resource.RLIMIT_CPU)
                with open("limit.txt", "w") as handle:
                    handle.write(f"{soft} {'OPENAI_API_KEY' in os.environ}")

            def forward(self, x):
                return torch.relu(x)
        """)
    folder = write_run_once_folder(problem, source, "python", tmp_path / "once", device="cpu",
                                   config=problem.configs[0].name)
    done = run_once(folder, timeout_s=120, limits=JobLimits(cpu_seconds=77), gpu=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-2000:]
    assert json.loads(done.stdout.decode().strip().splitlines()[-1])["ok"]
    assert (folder / "limit.txt").read_text() == "77 False"


def _correct_result(problem, device: str = "NVIDIA H200", energy: dict | None = None) -> EvaluationResult:
    return EvaluationResult(Verdict.CORRECT, "correct", device=device, timed_config=problem.largest_config.name,
                            candidate_us=300.0, baseline_us=900.0, speedup=3.0, energy=energy)


def _outcome(problem, impl, result, profile: bool = True):
    from engine.runs.pipeline import outcome_of

    proposal = Proposal(impl.source, impl.language, "library", impl.name)
    return outcome_of(problem, proposal, result, get_settings(), profile=profile)


def test_a_correct_round_on_a_gpu_stores_ncu_and_places_itself_by_it(settings, tmp_path, monkeypatch):
    _use_ncu(monkeypatch, _recording_ncu(tmp_path))
    problem, impl = _transpose()
    energy = {"device": "NVIDIA H200", "candidate": asdict(_measurement(0.1, 0.001))}  # a whole stored record
    outcome = _outcome(problem, impl, _correct_result(problem, energy=energy))
    assert outcome.ncu.ok and outcome.ncu.config == problem.largest_config.name
    assert outcome.ncu.summary.ld_sectors_per_request == pytest.approx((16777216 + 4194304) / (524288 + 1048576))
    assert outcome.roofline.point.source == "ncu" and outcome.roofline.config == outcome.ncu.config
    assert (outcome.energy.device, outcome.energy.candidate.joules_per_call) == ("NVIDIA H200", 0.1)
    kinds = [row.kind for row in outcome.diagnostic_rows()]
    assert {"static", "ncu", "energy", "roofline", "feedback"} <= set(kinds)


def test_refused_counters_leave_the_reason_where_the_user_looks(settings, tmp_path, monkeypatch):
    refused = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters"
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, output=refused, code=1))
    problem, impl = _transpose()
    outcome = _outcome(problem, impl, _correct_result(problem))
    assert outcome.ncu.ok is False and "counters refused" in outcome.ncu.reason
    assert any("no dynamic diagnostics" in note for note in outcome.roofline.notes)
    assert outcome.roofline.point.source == "analytical" and outcome.roofline.config == problem.largest_config.name


@pytest.mark.parametrize(("verdict", "device"), [(Verdict.CORRECT, "cpu"), (Verdict.INCORRECT, "NVIDIA H200")])
def test_nothing_is_profiled_without_a_gpu_or_a_correct_candidate(settings, tmp_path, monkeypatch, verdict, device):
    import engine.analysis.profile.dynamic as dynamic

    profiled = []
    _use_ncu(monkeypatch, _recording_ncu(tmp_path))
    monkeypatch.setattr(dynamic, "profile_candidate", lambda *a, **k: profiled.append(a))
    problem, impl = _transpose()
    result = _correct_result(problem, device=device)
    result.verdict = verdict
    outcome = _outcome(problem, impl, result)
    assert outcome.ncu is None and not profiled


def test_a_profiler_crash_is_a_reason_not_a_lost_round(settings, monkeypatch):
    import engine.runs.pipeline as pipeline

    def explode(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pipeline, "profile_candidate", explode)
    problem, impl = _transpose()
    outcome = _outcome(problem, impl, _correct_result(problem))
    assert outcome.ncu == NcuRecord(ok=False, seconds=0.0, config=problem.largest_config.name,
                                    reason="profiling failed: OSError: disk full")
    assert outcome.feedback_text


def test_energy_that_could_not_be_read_says_why(settings, monkeypatch):
    problem, impl = _transpose()
    result = _correct_result(problem, device="cpu")
    result.notes.append("energy not measured: pynvml (nvidia-ml-py) is not installed")
    assert _outcome(problem, impl, result, profile=False).energy == EnergyRecord(reason=result.notes[-1])


def _measurement(joules: float, seconds: float) -> EnergyMeasurement:
    return EnergyMeasurement(joules_per_call=joules, seconds_per_call=seconds, calls=100, seconds=100 * seconds,
                             joules=100 * joules, average_watts=joules / seconds, idle_watts=80.0, device="H200")


class _LoopingRunner:
    """Stands in for a runner session: answers the judge's "loop" request with a call count."""

    def __init__(self, calls: int = 100) -> None:
        self.calls, self.requests = calls, []

    def request(self, op, **fields):
        from engine.wire.replies import decode

        self.requests.append((op, fields))
        return decode(op, {"ok": True, "calls": self.calls})


def test_the_energy_step_reads_the_counter_around_the_runners_loop_and_its_own_baseline(monkeypatch):
    calls: list[str] = []
    measured = iter([_measurement(0.2, 0.001), _measurement(0.5, 0.003)])

    def fake_measure(loop, seconds):
        assert seconds == 0.5
        assert loop(0.01) > 0
        return next(measured)

    monkeypatch.setattr(judge_energy, "measure_energy_of_loop", fake_measure)
    runner, state = _LoopingRunner(), JobState()
    judge_energy.record_energy(state, runner, "large", [7, 8], lambda i: calls.append(f"eager {i}"), "eager", 0.5,
                               sync=lambda: None)
    assert runner.requests[0][0] == "loop" and runner.requests[0][1]["seeds"] == [7, 8]
    assert calls and calls[0] == "eager 0"
    record = state.energy
    assert record["baseline_name"] == "eager" and record["candidate"]["joules_per_call"] == 0.2
    assert record["comparison"]["ratio"] == pytest.approx(0.4)
    assert record["comparison"]["matched_speed_joules"] == pytest.approx(0.2 + 0.002 * 80.0)


def test_a_cpu_baseline_is_not_measured_on_the_gpus_counter(monkeypatch):
    monkeypatch.setattr(judge_energy, "measure_energy_of_loop", lambda loop, seconds: _measurement(0.2, 0.001))
    state = JobState()
    judge_energy.record_energy(state, _LoopingRunner(), "large", [1], None, "c-reference", 1.0, sync=lambda: None)
    assert state.energy["baseline"] is None and state.energy["candidate"]["joules_per_call"] == 0.2


def test_no_counter_is_a_note(monkeypatch):
    def unavailable(loop, seconds):
        raise EnergyUnavailable("NVML did not start")

    monkeypatch.setattr(judge_energy, "measure_energy_of_loop", unavailable)
    state = JobState()
    judge_energy.record_energy(state, _LoopingRunner(), "large", [1], None, None, 1.0, sync=lambda: None)
    assert state.energy is None and state.notes == ["energy not measured: NVML did not start"]


def test_energy_is_asked_of_gpu_jobs_only(settings):
    from engine.compilation.candidate import build_candidate
    from engine.verify.prepare import TimingOptions, make_job

    problem, impl = _transpose()
    build = build_candidate(problem, impl.source, impl.language)
    timing = TimingOptions.from_settings(get_settings())
    assert timing.energy_seconds == get_settings().energy_seconds > 0
    on_gpu = make_job(problem, build, impl.source, "cuda", cache_dir=get_settings().cache_dir, timing=timing)
    on_cpu = make_job(problem, build, impl.source, "cpu", cache_dir=get_settings().cache_dir, timing=timing)
    assert on_gpu.timing.energy_seconds == get_settings().energy_seconds and on_cpu.timing.energy_seconds == 0.0
    assert on_gpu.timing.policy == on_cpu.timing.policy == timing.policy  # the settings' policy, as it was made


def test_an_empty_profile_record_keeps_its_reason():
    record = ncu_record(NcuProfile(True, "", [], 1.234, []), "large")
    assert record == NcuRecord(ok=False, seconds=1.23, config="large", reason="ncu saw none of the candidate's kernels")


def test_a_profiled_round_stores_the_static_estimate_beside_ncu_per_kernel(settings, tmp_path, monkeypatch):
    output = RAW_CSV.replace("copy_strided(const float *, float *, int, int)",
                             "transpose_tiled(int, int, const float *, float *)")
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, output=output))
    problem, impl = _transpose()
    outcome = _outcome(problem, impl, _correct_result(problem))
    (row,) = outcome.ncu.static_vs_ncu
    assert row.kernel == "transpose_tiled" and row.ncu_ld == 16777216 / 524288
    assert row.static_ld is not None and row.ld_agree == (abs(row.static_ld - 32.0) <= 8.0)
    assert row.ncu_theoretical_occupancy is None and row.occupancy_agree is None  # not in the metric set


@pytest.mark.parametrize(("name", "short"), [
    ("transpose_tiled(int, int, const float *, float *)", "transpose_tiled"),
    ("void gemm::tiled_kernel<float, 4>(const float *, int)", "tiled_kernel"),
    ("relu_naive", "relu_naive")])
def test_ncu_kernel_names_are_matched_by_their_function_name(name, short):
    from engine.analysis.profile.agreement import short_name

    assert short_name(name) == short


@pytest.mark.parametrize(("static", "measured", "agree"), [(4.0, 4.9, True), (4.0, 5.5, False), (16.0, 20.0, True),
                                                           (10.0, 16.0, False), (None, 4.0, None)])
def test_sectors_agree_within_a_quarter_or_one_sector(static, measured, agree):
    from engine.analysis.profile.agreement import agree_sectors

    assert agree_sectors(static, measured) is agree


@pytest.mark.parametrize(("candidate_us", "expected"), [
    (300.0, "large"),  # 40 replays of 0.3 ms: the timed configuration
    (300_000.0, "medium"),  # 0.3 s a call: medium has 1/64 of the FLOPs and fits
    (5e9, "small"),  # nothing fits: the smallest visible one, never a hidden one
])
def test_a_slow_candidate_is_profiled_on_a_smaller_visible_configuration(candidate_us, expected):
    from engine.analysis.profile.dynamic import profile_config

    assert profile_config(get_problem("matmul-fp16"), "large", candidate_us) == expected


def test_without_a_timing_the_timed_configuration_is_profiled():
    from engine.analysis.profile.dynamic import profile_config

    assert profile_config(get_problem("matmul-fp16"), "large", None) == "large"
    assert profile_config(get_problem("matmul-fp16"), None, 300_000.0) is None


def test_a_round_profiled_on_a_smaller_configuration_says_which(settings, tmp_path, monkeypatch):
    _use_ncu(monkeypatch, _recording_ncu(tmp_path))
    problem, impl = _transpose()
    result = _correct_result(problem)
    result.candidate_us = 200_000.0  # 0.2 s on `large` (537 MB): 8 s of replays; medium moves 1/21 of it
    outcome = _outcome(problem, impl, result)
    assert outcome.ncu.config == "medium" and outcome.ncu.ok


def test_a_hidden_timed_configuration_is_never_the_one_profiled():
    from engine.analysis.profile.dynamic import profile_config

    problem = get_problem("matmul-fp16")
    assert profile_config(problem, "odd-shape", 300.0) == "large"  # odd-shape is hidden: the largest visible fits
    assert profile_config(problem, "odd-shape", None) == "large"


def test_a_c_candidate_runs_once_for_the_profiler_in_its_sandbox(tmp_path, refinery_home):
    """The run-once folder is ours; the runner in it writes its own copy of the library (a name clash
    made every C candidate's ncu profile fail with 'Permission denied' on a sandbox of its own user)."""
    from engine.problems import load_problem
    from engine.verify.once import run_once
    from engine.verify.prepare import write_run_once_folder

    problem = load_problem(Path(__file__).parent / "cheats" / "problems" / "c" / "scale-small")
    impl = next(i for i in problem.implementations if i.device == "cpu")
    folder = write_run_once_folder(problem, impl.path.read_text(), "c", tmp_path / "once", repeats=3, device="cpu")
    done = run_once(folder, timeout_s=120, gpu=False)
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert done.returncode == 0 and summary["ok"] and summary["repeats"] == 3, done.stderr.decode()[-2000:]
