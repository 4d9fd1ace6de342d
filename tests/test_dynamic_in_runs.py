"""A run's dynamic diagnostics without a GPU: ncu around a verified candidate (against a stand-in ncu
that records what it was given), the walls its target runs in, the NVML energy step of the worker,
and what a round stores and shows when profiling works, fails or does not apply."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine.analysis.energy import EnergyMeasurement, EnergyUnavailable
from engine.analysis.ncu import NcuProfile
from engine.problems import get_problem
from engine.propose.base import Proposal
from engine.settings import get_settings
from engine.verify import energy_calls
from engine.verify.outcome import JobFailure, JobState
from engine.verify.records import EvaluationResult, Verdict
from tests.test_analysis_dynamic import RAW_CSV, _fake_ncu

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def settings(refinery_home, monkeypatch):
    monkeypatch.setenv("REFINERY_DATABASE_URL", f"sqlite:///{refinery_home / 'secret.db'}")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-candidates")
    get_settings.cache_clear()
    yield get_settings()
    get_settings.cache_clear()


def _recording_ncu(tmp_path: Path, record: Path, output: str = RAW_CSV, code: int = 0) -> str:
    """An ncu that writes down its arguments, working folder and environment, then prints `output`."""
    return _fake_ncu(tmp_path, f"""
import json, os
target = args[args.index("--metrics") + 2:]
target = target[target.index("-m") - 1:] if "-m" in target else target
job = target[3]
json.dump({{"args": args, "cwd": os.getcwd(), "env": dict(os.environ), "job_existed": os.path.exists(job),
           "job": json.load(open(job))}}, open({str(record)!r}, "w"))
print({output!r})
sys.exit({code})""")


def _use_ncu(monkeypatch, path: str) -> None:
    monkeypatch.setenv("REFINERY_NCU_PATH", path)
    get_settings.cache_clear()


def _transpose():
    problem = get_problem("matrix-transpose")
    return problem, problem.implementation("coalesced")


def test_importing_the_energy_module_loads_no_parser():
    """The GPU worker imports engine.analysis.energy: the package must not drag tree-sitter in with it."""
    code = ("import sys, engine.analysis.energy; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tree_sitter', 'simpleeval', 'sqlmodel')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert done.stdout.strip() == "[]"


def test_kernel_selection_names_every_own_kernel_and_covers_one_call():
    from engine.analysis.dynamic import kernel_selection
    from engine.analysis.static import analyse_candidate

    problem = get_problem("fdtd-2d")
    impl = problem.implementation("naive")
    report = analyse_candidate(problem, impl.source, impl.language)
    regex, launches = kernel_selection(report)
    names = sorted({k.name for k in report.kernels})
    assert len(names) == 3 and regex == "^(" + "|".join(names) + r")\b"
    assert launches >= 3


def test_ncu_runs_the_candidate_once_in_the_workers_walls(settings, tmp_path, monkeypatch):
    from engine.analysis.dynamic import profile_candidate
    from engine.analysis.static import analyse_candidate

    record = tmp_path / "ncu-call.json"
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, record))
    problem, impl = _transpose()
    static = analyse_candidate(problem, impl.source, impl.language)
    profile = profile_candidate(problem, impl.source, impl.language, static, settings=get_settings())
    assert profile.ok and [k.name.split("(")[0] for k in profile.kernels] == ["copy_strided", "add_naive"]
    seen = json.loads(record.read_text())
    args = seen["args"]
    assert args[args.index("--clock-control") + 1] == "none" and "--csv" in args
    assert args[args.index("--kernel-name") + 1] == "regex:^(transpose_tiled)\\b"
    target = args[args.index("-m") - 1:]
    assert target[1:3] == ["-m", "engine.verify.run_once"] and seen["job_existed"]
    limits = json.loads(target[4])
    assert limits["cpu_seconds"] == get_settings().worker_cpu_seconds
    assert seen["job"]["mode"] == "run_once" and seen["job"]["configs"][0]["name"] == problem.largest_config.name
    env = seen["env"]
    assert "OPENAI_API_KEY" not in env and not any(k.startswith("REFINERY_") for k in env)
    assert env["CUPY_CACHE_DIR"] == str(get_settings().cache_dir / "cupy")
    scratch = Path(seen["cwd"])
    assert scratch.parent == get_settings().cache_dir / "verify" and env["TMPDIR"] == str(scratch)
    assert not scratch.exists(), "the scratch folder outlived the profile"


def test_a_candidate_that_does_not_build_is_not_profiled(settings, tmp_path, monkeypatch):
    from engine.analysis.dynamic import profile_candidate
    from engine.analysis.static import analyse_candidate

    record = tmp_path / "ncu-call.json"
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, record))
    problem, impl = _transpose()
    static = analyse_candidate(problem, impl.source, impl.language)
    broken = impl.source.replace("__global__", "__global__ this does not parse", 1)
    profile = profile_candidate(problem, broken, impl.language, static, settings=get_settings())
    assert not profile.ok and "does not build" in profile.reason and not record.exists()


def test_run_once_applies_the_limits_it_is_given(settings, tmp_path):
    from engine.verify.prepare import write_run_once_job

    problem = get_problem("relu")
    source = textwrap.dedent("""
        import resource
        from pathlib import Path
        import torch

        class ModelNew(torch.nn.Module):
            def __init__(self):
                super().__init__()
                soft, _ = resource.getrlimit(resource.RLIMIT_CPU)
                Path(__file__).with_name("limit.txt").write_text(str(soft))

            def forward(self, x):
                return torch.relu(x)
        """)
    job = write_run_once_job(problem, source, "python", tmp_path / "job.json", device="cpu",
                             config=problem.configs[0].name)
    limits = json.dumps({"cpu_seconds": 77, "file_size_mb": 64, "memory_mb": 8192, "extra_processes": 64})
    done = subprocess.run([sys.executable, "-m", "engine.verify.run_once", str(job), limits], capture_output=True,
                          text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    written = next(tmp_path.glob("run_once-*/limit.txt"))
    assert written.read_text() == "77"


def _correct_result(problem, device: str = "NVIDIA H200", energy: dict | None = None) -> EvaluationResult:
    return EvaluationResult(Verdict.CORRECT, "correct", device=device, timed_config=problem.largest_config.name,
                            candidate_us=300.0, baseline_us=900.0, speedup=3.0, energy=energy)


def _outcome(problem, impl, result, profile: bool = True):
    from engine.pipeline import outcome_of

    proposal = Proposal(impl.source, impl.language, "library", impl.name)
    return outcome_of(problem, proposal, result, get_settings(), profile=profile)


def test_a_correct_round_on_a_gpu_stores_ncu_and_places_itself_by_it(settings, tmp_path, monkeypatch):
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, tmp_path / "call.json"))
    problem, impl = _transpose()
    energy = {"device": "NVIDIA H200", "candidate": {"joules_per_call": 0.1}}
    outcome = _outcome(problem, impl, _correct_result(problem, energy=energy))
    assert outcome.ncu["ok"] and outcome.ncu["config"] == problem.largest_config.name
    assert outcome.ncu["summary"]["ld_sectors_per_request"] == pytest.approx((16777216 + 4194304) / (524288 + 1048576))
    assert outcome.roofline["point"]["source"] == "ncu"
    assert outcome.energy == energy
    kinds = [row.kind for row in outcome.diagnostic_rows()]
    assert {"static", "ncu", "energy", "roofline", "feedback"} <= set(kinds)


def test_refused_counters_leave_the_reason_where_the_user_looks(settings, tmp_path, monkeypatch):
    refused = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters"
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, tmp_path / "call.json", output=refused, code=1))
    problem, impl = _transpose()
    outcome = _outcome(problem, impl, _correct_result(problem))
    assert outcome.ncu["ok"] is False and "counters refused" in outcome.ncu["reason"]
    assert any("no dynamic diagnostics" in note for note in outcome.roofline["notes"])
    assert outcome.roofline["point"]["source"] == "analytical"


@pytest.mark.parametrize(("verdict", "device"), [(Verdict.CORRECT, "cpu"), (Verdict.INCORRECT, "NVIDIA H200")])
def test_nothing_is_profiled_without_a_gpu_or_a_correct_candidate(settings, tmp_path, monkeypatch, verdict, device):
    record = tmp_path / "call.json"
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, record))
    problem, impl = _transpose()
    result = _correct_result(problem, device=device)
    result.verdict = verdict
    outcome = _outcome(problem, impl, result)
    assert outcome.ncu is None and not record.exists()


def test_a_profiler_crash_is_a_reason_not_a_lost_round(settings, monkeypatch):
    import engine.pipeline as pipeline

    def explode(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pipeline, "profile_candidate", explode)
    problem, impl = _transpose()
    outcome = _outcome(problem, impl, _correct_result(problem))
    assert outcome.ncu == {"ok": False, "seconds": 0.0, "config": problem.largest_config.name,
                           "reason": "profiling failed: OSError: disk full"}
    assert outcome.feedback_text


def test_energy_that_could_not_be_read_says_why(settings, monkeypatch):
    problem, impl = _transpose()
    result = _correct_result(problem, device="cpu")
    result.notes.append("energy not measured: pynvml (nvidia-ml-py) is not installed")
    assert _outcome(problem, impl, result, profile=False).energy == {"reason": result.notes[-1]}


def _measurement(joules: float, seconds: float) -> EnergyMeasurement:
    return EnergyMeasurement(joules_per_call=joules, seconds_per_call=seconds, calls=100, seconds=100 * seconds,
                             joules=100 * joules, average_watts=joules / seconds, idle_watts=80.0, device="H200")


def test_the_energy_step_measures_the_candidate_and_the_baseline_it_is_compared_with(monkeypatch):
    calls: list[str] = []
    fns = {"candidate": lambda i: calls.append(f"candidate {i}"), "eager": lambda i: calls.append(f"eager {i}"),
           "compile": lambda i: calls.append("compile")}
    measured = iter([_measurement(0.2, 0.001), _measurement(0.5, 0.003)])

    def fake_measure(fn, min_seconds):
        assert min_seconds == 0.5
        fn(), fn()
        return next(measured)

    monkeypatch.setattr(energy_calls, "measure_energy", fake_measure)
    state = JobState()
    energy_calls.record_energy(state, fns, ["eager", "compile"], 0.5)
    assert calls == ["candidate 0", "candidate 1", "eager 2", "eager 3"]  # fresh trial indices: input sets rotate
    record = state.energy
    assert record["baseline_name"] == "eager" and record["candidate"]["joules_per_call"] == 0.2
    assert record["comparison"]["ratio"] == pytest.approx(0.4)
    assert record["comparison"]["matched_speed_joules"] == pytest.approx(0.2 + 0.002 * 80.0)


def test_a_cpu_baseline_is_not_measured_on_the_gpus_counter(monkeypatch):
    monkeypatch.setattr(energy_calls, "measure_energy", lambda fn, min_seconds: _measurement(0.2, 0.001))
    state = JobState()
    energy_calls.record_energy(state, {"candidate": lambda i: None}, ["c-reference"], 1.0)
    assert "baseline" not in state.energy and state.energy["candidate"]["joules_per_call"] == 0.2


def test_no_counter_is_a_note_and_a_fault_in_the_loop_is_the_candidates(monkeypatch):
    def unavailable(fn, min_seconds):
        raise EnergyUnavailable("NVML did not start")

    monkeypatch.setattr(energy_calls, "measure_energy", unavailable)
    state = JobState()
    energy_calls.record_energy(state, {"candidate": lambda i: None}, [], 1.0)
    assert state.energy is None and state.notes == ["energy not measured: NVML did not start"]

    def faulting(fn, min_seconds):
        fn()
        raise AssertionError("unreachable")

    monkeypatch.setattr(energy_calls, "measure_energy", faulting)

    def candidate(_i):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    with pytest.raises(JobFailure) as failure:
        energy_calls.record_energy(JobState(), {"candidate": candidate}, [], 1.0)
    assert failure.value.verdict == Verdict.RUNTIME_ERROR and "illegal memory access" in failure.value.message
    assert failure.value.fatal, "a CUDA fault ends the worker"


def test_energy_is_asked_of_gpu_jobs_only(settings):
    from engine.build.candidate import build_candidate
    from engine.verify.prepare import TimingOptions, make_job

    problem, impl = _transpose()
    build = build_candidate(problem, impl.source, impl.language)
    timing = TimingOptions.from_settings(get_settings())
    assert timing.energy_seconds == get_settings().energy_seconds > 0
    on_gpu = make_job(problem, build, impl.source, "cuda", cache_dir=get_settings().cache_dir, timing=timing)
    on_cpu = make_job(problem, build, impl.source, "cpu", cache_dir=get_settings().cache_dir, timing=timing)
    assert on_gpu.timing.energy_seconds == get_settings().energy_seconds and on_cpu.timing.energy_seconds == 0.0


def test_an_empty_profile_record_keeps_its_reason():
    from engine.pipeline import _ncu_record

    record = _ncu_record(NcuProfile(True, "", [], 1.234, []), "large")
    assert record == {"ok": False, "seconds": 1.23, "config": "large",
                      "reason": "ncu saw none of the candidate's kernels"}


def test_a_profiled_round_stores_the_static_estimate_beside_ncu_per_kernel(settings, tmp_path, monkeypatch):
    output = RAW_CSV.replace("copy_strided(const float *, float *, int, int)",
                             "transpose_tiled(int, int, const float *, float *)")
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, tmp_path / "call.json", output=output))
    problem, impl = _transpose()
    outcome = _outcome(problem, impl, _correct_result(problem))
    (row,) = outcome.ncu["static_vs_ncu"]
    assert row["kernel"] == "transpose_tiled" and row["ncu_ld"] == 16777216 / 524288
    assert row["static_ld"] is not None and row["ld_agree"] == (abs(row["static_ld"] - 32.0) <= 8.0)
    assert row["ncu_theoretical_occupancy"] is None and row["occupancy_agree"] is None  # not in the metric set


@pytest.mark.parametrize(("name", "short"), [
    ("transpose_tiled(int, int, const float *, float *)", "transpose_tiled"),
    ("void gemm::tiled_kernel<float, 4>(const float *, int)", "tiled_kernel"),
    ("relu_naive", "relu_naive")])
def test_ncu_kernel_names_are_matched_by_their_function_name(name, short):
    from engine.analysis.agreement import short_name

    assert short_name(name) == short


@pytest.mark.parametrize(("static", "measured", "agree"), [(4.0, 4.9, True), (4.0, 5.5, False), (16.0, 20.0, True),
                                                           (10.0, 16.0, False), (None, 4.0, None)])
def test_sectors_agree_within_a_quarter_or_one_sector(static, measured, agree):
    from engine.analysis.agreement import agree_sectors

    assert agree_sectors(static, measured) is agree


@pytest.mark.parametrize(("candidate_us", "expected"), [
    (300.0, "large"),  # 40 replays of 0.3 ms: the timed configuration
    (300_000.0, "medium"),  # 0.3 s a call: medium has 1/64 of the FLOPs and fits
    (5e9, "small"),  # nothing fits: the smallest visible one, never a hidden one
])
def test_a_slow_candidate_is_profiled_on_a_smaller_visible_configuration(candidate_us, expected):
    from engine.analysis.dynamic import profile_config

    assert profile_config(get_problem("matmul-fp16"), "large", candidate_us) == expected


def test_without_a_timing_the_timed_configuration_is_profiled():
    from engine.analysis.dynamic import profile_config

    assert profile_config(get_problem("matmul-fp16"), "large", None) == "large"
    assert profile_config(get_problem("matmul-fp16"), None, 300_000.0) is None


def test_a_round_profiled_on_a_smaller_configuration_says_which(settings, tmp_path, monkeypatch):
    record = tmp_path / "call.json"
    _use_ncu(monkeypatch, _recording_ncu(tmp_path, record))
    problem, impl = _transpose()
    result = _correct_result(problem)
    result.candidate_us = 200_000.0  # 0.2 s on `large` (537 MB): 8 s of replays; medium moves 1/21 of it
    outcome = _outcome(problem, impl, result)
    assert json.loads(record.read_text())["job"]["configs"][0]["name"] == "medium"
    assert outcome.ncu["config"] == "medium" and outcome.ncu["ok"]


def test_a_hidden_timed_configuration_is_never_the_one_profiled():
    from engine.analysis.dynamic import profile_config

    problem = get_problem("matmul-fp16")
    assert profile_config(problem, "odd-shape", 300.0) == "large"  # odd-shape is hidden: the largest visible fits
    assert profile_config(problem, "odd-shape", None) == "large"
