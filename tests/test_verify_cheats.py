"""Every cheating candidate in tests/cheats/ is caught on a CPU, by the check meant to catch it.

Static rules are evidence for most cheats: the runtime check (or the sandbox) decides, with the rules
on or off. Only what no runtime check can see (lower precision, lazy tensors, a fallback to the
reference's ops) is still a static verdict. GPU-only cheats (stream escape, allocator reuse on CUDA,
decoy kernels) are in test_verify_gpu.py; attacks on the verifier itself in test_attacks.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.sandbox import boundary
from engine.schema.verdict import Verdict
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy
from tests.verify_support import verifier_in_fresh_home

CHEATS = Path(__file__).parent / "cheats"
FAST = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=3, min_seconds=0.0, max_trials=5,
                                                             max_seconds=1.0, flush_bytes=1 << 20)), timeout_s=120)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), FAST) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def problems():
    return {"py": load_problem(CHEATS / "problems" / "pytorch" / "relu-small"),
            "c": load_problem(CHEATS / "problems" / "c" / "scale-small")}


def run(verifier, problems, name: str, static: bool = True):
    path = CHEATS / name
    problem = problems["py" if path.suffix == ".py" else "c"]
    source = path.read_text().replace("__ANSWER_FILE__", str(problem.reference_path.resolve()))
    checker = Verifier(pool=verifier.pool, options=replace(FAST, static_checks=static), settings=verifier.settings)
    return checker.evaluate(problem, source, "python" if path.suffix == ".py" else "c")


def failed_checks(result) -> set[str]:
    return {f.check for f in result.integrity if not f.passed}


@pytest.mark.parametrize(("cheat", "check"), [
    ("reference_op.py", "torch-op"),
    ("input_mutation.py", "input-mutation"),
    ("result_caching.py", "result-caching"),
    ("c_input_mutation.c", "input-mutation"),
    ("c_result_cache.c", "result-caching"),
])
def test_runtime_check_catches_the_cheat(verifier, problems, cheat, check):
    result = run(verifier, problems, cheat)
    assert result.verdict == Verdict.INTEGRITY_VIOLATION, result.message
    assert check in failed_checks(result)


@pytest.mark.parametrize(("cheat", "config"), [
    ("partial.py", "small"), ("shape_specialized.py", "odd-shape"),
    ("c_partial.c", "small"), ("c_shape_specialized.c", "odd-shape"),
])
def test_partial_or_shape_specialised_work_is_incorrect_on_the_configuration_it_skips(verifier, problems, cheat,
                                                                                      config):
    result = run(verifier, problems, cheat)
    assert result.verdict == Verdict.INCORRECT
    wrong = result.failed_config
    assert wrong.name == config and wrong.first_mismatch and wrong.max_abs_error > 0
    assert config in result.message


def test_unwritten_c_outputs_are_named_as_never_written(verifier, problems):
    result = run(verifier, problems, "c_partial.c")
    assert "never written" in result.failed_config.message and "y at [512]" in result.failed_config.message


def test_an_output_never_written_is_incorrect_rather_than_a_cached_result(verifier, problems):
    result = run(verifier, problems, "c_writes_nothing.c")
    assert result.verdict == Verdict.INCORRECT and "never written" in result.message
    assert "result-caching" not in failed_checks(result)


@pytest.mark.parametrize(("cheat", "static_rule", "runtime_check"), [
    ("monkeypatch.py", "static:monkeypatch", "monkeypatch"),
    ("deferred_thread.py", "static:threads", "threads"),
    ("passthrough_subclass.py", "static:reference-subclass", "torch-op"),
])
def test_the_runtime_check_decides_and_the_static_rule_is_evidence(verifier, problems, cheat, static_rule,
                                                                     runtime_check):
    for static in (True, False):
        result = run(verifier, problems, cheat, static=static)
        assert result.verdict == Verdict.INTEGRITY_VIOLATION, result.message
        assert runtime_check in failed_checks(result)
        evidence = {f.check for f in result.integrity if f.kind == "evidence"}
        assert (static_rule in evidence) == static


def test_a_lazy_tensor_is_a_static_verdict_and_caught_at_run_time_too(verifier, problems):
    assert "static:tensor-subclass" in failed_checks(run(verifier, problems, "lazy_tensor.py"))
    runtime = run(verifier, problems, "lazy_tensor.py", static=False)
    assert runtime.verdict == Verdict.INTEGRITY_VIOLATION and "tensor-subclass" in failed_checks(runtime)


@pytest.mark.skipif(not boundary().namespaced, reason="no OS sandbox on this machine: " + "; ".join(boundary().missing))
def test_a_candidate_reading_files_outside_its_sandbox_finds_nothing_there(verifier, problems):
    result = run(verifier, problems, "reads_files.py")
    assert result.verdict == Verdict.RUNTIME_ERROR and "No such file" in result.message
    assert {"static:file-access", "static:environment"} <= {f.check for f in result.integrity if f.kind == "evidence"}


def test_lower_precision_is_a_static_violation_and_wrong_without_the_rule(verifier, problems):
    assert "static:precision" in failed_checks(run(verifier, problems, "lower_precision.py"))
    assert run(verifier, problems, "lower_precision.py", static=False).verdict == Verdict.INCORRECT


def test_a_fallback_to_the_reference_is_rejected_before_running(verifier, problems):
    result = run(verifier, problems, "try_fallback.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and "static:try-fallback" in failed_checks(result)
    assert not result.configs  # nothing ran


def test_a_c_candidate_reading_the_environment_finds_no_secret_and_is_judged_on_its_work(verifier, problems):
    result = run(verifier, problems, "c_reads_env.c")
    assert result.verdict == Verdict.CORRECT  # the environment holds nothing: nothing to gain, nothing leaked
    assert "static:environment" in {f.check for f in result.integrity if f.kind == "evidence"}


def test_a_c_candidate_handing_work_to_a_broken_thread_dies_alone(verifier, problems):
    result = run(verifier, problems, "c_thread.c")
    assert result.verdict == Verdict.RUNTIME_ERROR and "died" in result.message
    assert run(verifier, problems, "honest.py").verdict == Verdict.CORRECT


def test_the_honest_candidates_pass_every_check(verifier, problems):
    for name in ("honest.py", ):
        result = run(verifier, problems, name)
        assert result.verdict == Verdict.CORRECT, result.message
        assert not failed_checks(result)
    c_result = verifier.evaluate(problems["c"], problems["c"].implementation("cpu-naive").source, "c")
    assert c_result.verdict == Verdict.CORRECT and not failed_checks(c_result)
