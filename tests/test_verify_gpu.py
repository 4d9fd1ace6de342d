"""On the GPU: no shipped implementation is rejected, the library's promised speed orders hold, and the
cheats that need a GPU (stream escape, allocator reuse, decoy kernels, CUDA faults) are caught.

Self-contained for the device machine: needs torch, cupy, nvcc, numpy, pytest (and the wheels on
PYTHONPATH for the settings). Every test is marked `gpu` and skips where there is none. Run one
problem's checks with `-k <slug>`; the tables print with `-s`.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from engine.problems import load_problem, scan_all
from engine.schema.verdict import Verdict
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.judge.c_judge import REFERENCE_CALLS
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy
from tests.verify_support import verifier_in_fresh_home

pytestmark = pytest.mark.gpu

CHEATS = Path(__file__).parent / "cheats"
REPO = Path(__file__).resolve().parents[1]
OPTIONS = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=10, min_seconds=0.2, max_trials=300,
                                                                max_seconds=3.0)),
                        timeout_s=300)


def _library():
    return [p for p in scan_all().problems if any(i.device == "cuda" for i in p.implementations)]


LIBRARY = _library()


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with verifier_in_fresh_home(home, OPTIONS, pool_timeout_s=300, require_gpu=True) as verifier:
        yield verifier


_RESULTS: dict[str, dict] = {}


def library_results(verifier, problem) -> dict:
    """Every CUDA implementation of `problem`, evaluated once (shared seeds) and reused by the tests below."""
    if problem.slug not in _RESULTS:
        impls = [i for i in problem.implementations if i.device == "cuda"]
        results = verifier.evaluate_many(problem, [(i.source, i.language) for i in impls])
        _RESULTS[problem.slug] = dict(zip([i.name for i in impls], results, strict=True))
        _record(problem, impls, results)
        print(f"\n{problem.slug}: timed on {next(iter(results)).timed_config}")
        print(f"  {'implementation':<22}{'verdict':<22}{'median µs':>12}{'IQR µs':>10}{'wall µs':>10}{'speedup':>9}")
        for name, r in _RESULTS[problem.slug].items():
            timed = next((c.candidate for c in r.configs if c.candidate), None)
            print(f"  {name:<22}{r.verdict:<22}{timed.median_us if timed else float('nan'):>12.1f}"
                  f"{timed.iqr_us if timed else float('nan'):>10.1f}"
                  f"{(timed.wall_us or float('nan')) if timed else float('nan'):>10.1f}"
                  f"{r.speedup or float('nan'):>9.2f}  {'' if r.verdict == 'correct' else r.message[:100]}")
    return _RESULTS[problem.slug]


def _record(problem, impls, results) -> None:
    """With REFINERY_LIBRARY_RESULTS set, append every result as one JSON line: the measured library
    ships as a recording (`benchmarks/library_recording.py`) and feeds the ranker's measured pairs."""
    target = os.environ.get("REFINERY_LIBRARY_RESULTS")
    if not target:
        return
    with open(target, "a") as handle:
        for impl, result in zip(impls, results, strict=True):
            handle.write(json.dumps({"problem": problem.slug, "implementation": impl.name, "strategy": impl.strategy,
                                     "language": impl.language, "result": result.to_json()}) + "\n")


@pytest.mark.parametrize("problem", LIBRARY, ids=[p.slug for p in LIBRARY])
def test_no_shipped_cuda_implementation_is_rejected(verifier, problem):
    results = library_results(verifier, problem)
    bad = {name: f"{r.verdict}: {r.message}" for name, r in results.items() if r.verdict != Verdict.CORRECT}
    assert not bad, bad
    for name, result in results.items():
        assert all(c.ok for c in result.configs) and len(result.configs) == len(problem.configs), name
        assert not result.failed_checks, (name, result.failed_checks)
        assert "reference's own rounding" not in result.flag_reason, (name, result.flag_reason)


@pytest.mark.parametrize("problem", [p for p in LIBRARY if p.expectations],
                         ids=[p.slug for p in LIBRARY if p.expectations])
def test_the_promised_speed_order_holds_on_the_largest_configuration(verifier, problem):
    results = library_results(verifier, problem)
    for expectation in problem.expectations:
        faster, slower = results[expectation.faster], results[expectation.slower]
        assert faster.candidate_us and slower.candidate_us, (faster.message, slower.message)
        print(f"  {problem.slug}: {expectation.faster} {faster.candidate_us:.1f} µs < "
              f"{expectation.slower} {slower.candidate_us:.1f} µs")
        assert faster.candidate_us < slower.candidate_us, expectation


# --- cheats that need a GPU ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def relu():
    return load_problem(CHEATS / "problems" / "pytorch" / "relu-small")


@pytest.fixture(scope="module")
def scale():
    return load_problem(CHEATS / "problems" / "c" / "scale-small")


def run(verifier, problem, name: str, static: bool = True):
    path = CHEATS / name
    checker = Verifier(pool=verifier.pool, options=replace(OPTIONS, static_checks=static), settings=verifier.settings)
    return checker.evaluate(problem, path.read_text(), {".py": "python", ".cu": "cuda", ".c": "c"}[path.suffix])


def failed(result) -> set[str]:
    return {f.check for f in result.failed_checks}


def test_honest_cupy_candidate_is_correct_with_its_kernel_owning_the_gpu_time(verifier, relu):
    result = run(verifier, relu, "gpu_honest.py")
    assert result.verdict == Verdict.CORRECT, result.message
    assert result.own_kernel_share and result.own_kernel_share > 0.9
    assert any(k.own and k.name == "relu_honest" for k in result.kernels)
    timed = next(c for c in result.configs if c.candidate)
    assert timed.candidate.clock == "cuda-events" and timed.candidate.wall_us is not None
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    assert clock.passed and "judge's clock" in clock.detail


def test_work_on_a_private_stream_is_caught_by_the_judges_clock_with_the_static_rule_as_evidence(verifier, relu):
    result = run(verifier, relu, "gpu_stream_escape.py")
    # the clock sees the hidden work, or a timed call's kept output, read on the timed stream, was not yet written
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and {"stream-escape", "timed-output"} & failed(result), \
        result.message
    assert "static:extra-stream" in {f.check for f in result.integrity if f.kind == "evidence"}


def test_c_candidate_launching_on_its_own_stream_is_caught_by_the_cross_check(verifier, scale):
    result = run(verifier, scale, "gpu_c_stream_escape.cu", static=False)
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and {"stream-escape", "timed-output"} & failed(result), \
        result.message


def test_returning_unwritten_allocator_memory_fails_after_the_scrub(verifier, relu):
    result = run(verifier, relu, "gpu_allocator_reuse.py")
    print(f"\nallocator reuse: {result.message}")
    assert result.verdict == Verdict.INCORRECT  # and, from the scrub, normally "... never written"


def test_a_decoy_kernel_that_never_runs_is_caught(verifier, relu):
    result = run(verifier, relu, "gpu_decoy_kernel.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and "kernel-coverage" in failed(result), result.message


def test_a_trivial_own_kernel_next_to_torch_doing_the_work_is_caught(verifier, relu):
    result = run(verifier, relu, "gpu_tiny_share.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and "kernel-coverage" in failed(result), result.message


def test_the_reference_op_doing_the_work_next_to_an_own_copy_kernel_is_caught(verifier, relu):
    result = run(verifier, relu, "gpu_reference_op.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and "torch-op" in failed(result), result.message


def test_the_reference_replayed_through_a_copy_kernel_of_its_own_is_caught(verifier):
    """The answer depends on the copy kernel, so what tells is that every op of the reference was called, and
    kernels not its own did the reference's GPU work."""
    matmul = load_problem(CHEATS / "problems" / "pytorch" / "matmul-mean-small")
    result = run(verifier, matmul, "gpu_replay_then_copy.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and "torch-op" in failed(result), result.message


def test_a_trivial_own_kernel_is_caught_by_what_the_answer_depends_on(verifier, relu):
    result = run(verifier, relu, "gpu_tiny_share.py")
    coverage = next(f for f in result.integrity if f.check == "kernel-coverage")
    assert not coverage.passed and "still correct" in coverage.detail, coverage.detail


def test_an_illegal_address_is_a_runtime_error_and_the_next_candidate_runs_in_a_fresh_process(verifier, relu):
    result = run(verifier, relu, "gpu_illegal_address.py")
    assert result.verdict == Verdict.RUNTIME_ERROR and "CUDA" in result.message
    after = run(verifier, relu, "gpu_honest.py")
    assert after.verdict == Verdict.CORRECT


def test_an_invalid_launch_in_a_c_candidate_is_reported_with_the_cuda_error(verifier, scale):
    result = run(verifier, scale, "gpu_c_bad_launch.cu")
    assert result.verdict == Verdict.RUNTIME_ERROR and "invalid" in result.message.lower(), result.message


def test_c_cuda_candidate_is_timed_against_the_naive_port_and_the_c_reference(verifier, scale):
    result = verifier.evaluate(scale, scale.implementation("naive").source, "cuda")
    assert result.verdict == Verdict.CORRECT, result.message
    timed = next(c for c in result.configs if c.candidate)
    assert {"naive-cuda", "c-reference"} <= set(timed.baselines) and result.baseline_name == "naive-cuda"
    fewest, most = REFERENCE_CALLS  # the reference's calls sized by its own time, not the candidate's
    assert fewest <= timed.baselines["c-reference"].trials <= most


@pytest.mark.timeout(600)
def test_load_inline_candidate_is_accepted_and_built_once(verifier, relu):
    first = run(verifier, relu, "gpu_inline_honest.py")
    assert first.verdict == Verdict.CORRECT, first.message + first.log[-2000:]
    again = run(verifier, relu, "gpu_inline_honest.py")
    print(f"\nload_inline: build {first.build_seconds:.1f} s then {again.build_seconds:.1f} s; load+first call "
          f"{first.load_seconds:.1f} s then {again.load_seconds:.1f} s")
    assert again.verdict == Verdict.CORRECT and again.build_seconds < max(5.0, first.build_seconds / 4)
    rebuilt = "the runner rebuilt the extension instead of loading the prebuilt one"
    assert first.load_seconds < 30 and again.load_seconds < 30, rebuilt


def test_torch_compile_baseline_is_timed_when_asked(verifier, relu):
    both = Verifier(pool=verifier.pool, options=replace(OPTIONS, baseline="both"), settings=verifier.settings)
    result = both.evaluate(relu, (CHEATS / "gpu_honest.py").read_text())
    timed = next(c for c in result.configs if c.candidate)
    assert result.verdict == Verdict.CORRECT and {"eager", "compile"} <= set(timed.baselines), \
        (result.message, result.notes)


def test_run_once_runs_a_candidate_n_times_for_the_profiler_in_its_sandbox(verifier, relu, tmp_path):
    from engine.verify.once import run_once
    from engine.verify.prepare import write_run_once_folder

    folder = write_run_once_folder(relu, (CHEATS / "gpu_honest.py").read_text(), "python", tmp_path / "once",
                                   repeats=7)
    done = run_once(folder, timeout_s=300)
    summary = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert done.returncode == 0 and summary["ok"] and summary["repeats"] == 7, done.stderr.decode()[-2000:]


def test_timing_the_same_kernel_twice_agrees(verifier):
    problem = next((p for p in LIBRARY if p.slug == "relu"), None)
    if problem is None:
        pytest.skip("the relu problem is not in the library")
    impl = problem.implementations[-1]
    first, second = (verifier.evaluate(problem, impl.source, impl.language) for _ in range(2))
    assert first.verdict == second.verdict == Verdict.CORRECT, (first.message, second.message)
    spread = abs(first.candidate_us - second.candidate_us) / min(first.candidate_us, second.candidate_us)
    print(f"\nrelu/{impl.name}: {first.candidate_us:.2f} µs then {second.candidate_us:.2f} µs ({spread:.1%} apart)")
    assert spread < 0.10
