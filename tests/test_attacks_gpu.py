"""Attacks that need a GPU: the candidate's own timing forged from inside its process, and work hidden on
another stream, are both caught by the judge's own clock, with or without the static rules."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.schema.verdict import Verdict
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy
from tests.verify_support import gpu_verifier

pytestmark = pytest.mark.gpu

TESTS = Path(__file__).parent
OPTIONS = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=30, min_seconds=0.3, max_trials=600,
                                                                max_seconds=3.0)),
                        timeout_s=600)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    yield from gpu_verifier(tmp_path_factory, OPTIONS)


@pytest.fixture(scope="module")
def relu():
    return load_problem(TESTS / "cheats" / "problems" / "pytorch" / "relu-small")


@pytest.mark.parametrize("static", [True, False])
def test_forged_cuda_event_times_are_caught_by_the_judges_clock(verifier, relu, static):
    checker = Verifier(pool=verifier.pool, options=replace(OPTIONS, static_checks=static), settings=verifier.settings)
    result = checker.evaluate(relu, (TESTS / "attacks" / "gpu_patch_events.py").read_text())
    print(f"\n{result.verdict}: {result.message}")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and result.speedup is None
    assert any(f.check in ("stream-escape", "monkeypatch") and not f.passed for f in result.integrity)
    clock = next((f for f in result.integrity if f.check == "stream-escape"), None)
    assert clock is None or not clock.passed or any(f.check == "monkeypatch" and not f.passed
                                                     for f in result.integrity)


@pytest.mark.parametrize("static", [True, False])
def test_work_hidden_on_a_private_stream_is_caught_by_the_judges_clock(verifier, relu, static):
    checker = Verifier(pool=verifier.pool, options=replace(OPTIONS, static_checks=static), settings=verifier.settings)
    result = checker.evaluate(relu, (TESTS / "cheats" / "gpu_stream_escape.py").read_text())
    print(f"\n{result.verdict}: {result.message}")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION
    # the clock sees the hidden work, or a timed call's kept output, read on the timed stream, was not yet written
    assert {"stream-escape", "timed-output"} & {f.check for f in result.failed_checks}


def _attack(verifier, relu, name: str):
    result = verifier.evaluate(relu, (TESTS / "attacks" / name).read_text())
    print(f"\n{name}: {result.verdict}: {result.message}")
    for finding in result.integrity:
        print(f"  {finding.check}: {'passed' if finding.passed else 'FAILED'} {finding.detail}")
    return result


def test_forged_calibration_plans_nothing_and_the_later_claims_are_caught(verifier, relu):
    result = _attack(verifier, relu, "gpu_forge_calibration.py")
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    assert result.speedup is None and (not clock.passed or "no speed is credited" in clock.detail), clock.detail
    assert "too few trials" not in clock.detail


def test_caching_across_timed_calls_is_caught_on_a_timed_call(verifier, relu):
    result = _attack(verifier, relu, "gpu_memo_while_timed.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and result.speedup is None
    assert all(c.ok for c in result.configs)
    timed = next(f for f in result.integrity if f.check == "timed-output")
    assert not timed.passed and "chosen after its block ran" in timed.detail


def test_stale_buffers_on_the_calls_expected_unchecked_are_caught(verifier, relu):
    result = _attack(verifier, relu, "gpu_stale_unless_checked.py")
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and result.speedup is None
    timed = next(f for f in result.integrity if f.check == "timed-output")
    assert not timed.passed


def test_an_honest_kernel_beside_the_attacks_keeps_its_speed(verifier, relu):
    result = _attack(verifier, relu, "../cheats/gpu_honest.py")
    assert result.verdict == Verdict.CORRECT and result.speedup is not None, result.message
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    timed = next(f for f in result.integrity if f.check == "timed-output")
    assert clock.passed and "no speed" not in clock.detail and timed.passed, clock.detail


def test_replaying_the_reference_except_while_profiled_is_flagged_from_its_outputs(verifier):
    matmul = load_problem(TESTS / "cheats" / "problems" / "pytorch" / "matmul-mean-small")
    result = _attack(verifier, matmul, "gpu_behave_when_profiled.py")
    coverage = next(f for f in result.integrity if f.check == "kernel-coverage")
    assert coverage.passed, "its process reports its own kernel: the report is what this attack forges"
    assert result.verdict == Verdict.CORRECT and result.flagged, result.message
    assert "reference's own rounding" in result.flag_reason
