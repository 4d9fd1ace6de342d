"""Every cheating candidate in tests/cheats/ is caught on a CPU, by the check meant to catch it.

Static rules see most cheats before anything runs; each of those is also run with the static rules
switched off, to show the runtime check behind them catches it too. GPU-only cheats (stream
escape, allocator reuse on CUDA, decoy kernels) are in test_verify_gpu.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.prepare import TimingOptions
from engine.verify.records import Verdict
from tests.verify_support import verifier_in_fresh_home

CHEATS = Path(__file__).parent / "cheats"
FAST = VerifyOptions(timing_policy=TimingOptions(min_trials=3, min_seconds=0.0, max_trials=5, max_seconds=1.0,
                                                 flush_bytes=1 << 20), timeout_s=120)


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
    ("reads_files.py", "static:file-access", "sandbox-access"),
    ("deferred_thread.py", "static:threads", "threads"),
    ("lazy_tensor.py", "static:tensor-subclass", "tensor-subclass"),
])
def test_static_rule_and_the_runtime_check_behind_it_both_catch_the_cheat(verifier, problems, cheat, static_rule,
                                                                          runtime_check):
    static = run(verifier, problems, cheat)
    assert static.verdict == Verdict.INTEGRITY_VIOLATION and static_rule in failed_checks(static)
    runtime = run(verifier, problems, cheat, static=False)
    assert runtime.verdict == Verdict.INTEGRITY_VIOLATION, runtime.message
    assert runtime_check in failed_checks(runtime)


def test_lower_precision_is_a_static_violation_and_wrong_without_the_rule(verifier, problems):
    assert "static:precision" in failed_checks(run(verifier, problems, "lower_precision.py"))
    assert run(verifier, problems, "lower_precision.py", static=False).verdict == Verdict.INCORRECT


@pytest.mark.parametrize(("cheat", "rule"), [
    ("try_fallback.py", "static:try-fallback"), ("passthrough_subclass.py", "static:reference-subclass"),
    ("c_reads_env.c", "static:environment"), ("c_thread.c", "static:threads"),
])
def test_static_only_cheats_are_rejected_before_running(verifier, problems, cheat, rule):
    result = run(verifier, problems, cheat)
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and rule in failed_checks(result)
    assert not result.configs  # nothing ran


def test_the_honest_candidates_pass_every_check(verifier, problems):
    for name in ("honest.py", ):
        result = run(verifier, problems, name)
        assert result.verdict == Verdict.CORRECT, result.message
        assert not failed_checks(result)
    c_result = verifier.evaluate(problems["c"], problems["c"].implementation("cpu-naive").source, "c")
    assert c_result.verdict == Verdict.CORRECT and not failed_checks(c_result)
