"""CPU code gets diagnostics that hold for CPU code: no GPU roofline position, no occupancy, no GPU
tool's advice in the feedback the next round reads; a wrong CPU candidate still gets the correctness
diagnosis."""

from __future__ import annotations

from engine.problems import get_problem
from engine.propose.base import Proposal
from engine.runs.pipeline import outcome_of
from engine.schema.verdict import ConfigResult, EvaluationResult, Verdict
from engine.settings import get_settings

GPU_WORDS = ("occupancy", "H200", "coalesc", "warp", "roofline", "shared memory", "bandwidth-bound", "SM")


def _proposal(name: str) -> Proposal:
    problem = get_problem("gemm")
    return Proposal(source=problem.implementation(name).source, language="c", origin="library", signature=name)


def test_a_correct_cpu_candidate_has_no_gpu_position_and_no_gpu_advice(refinery_home):
    result = EvaluationResult(Verdict.CORRECT, "correct", speedup=2.34, candidate_us=1000.0, baseline_us=2340.0,
                              device="cpu")
    outcome = outcome_of(get_problem("gemm"), _proposal("cpu-blocked"), result, get_settings())
    assert outcome.roofline is None and outcome.bottleneck is None
    assert outcome.findings == []
    assert "C on the CPU" in outcome.feedback_text
    assert not any(word.lower() in outcome.feedback_text.lower() for word in GPU_WORDS if word != "SM")


def test_a_wrong_cpu_candidate_is_told_what_is_wrong(refinery_home):
    config = ConfigResult("small", False, ok=False, max_abs_error=3.0, max_rel_error=0.5, message="mismatch")
    result = EvaluationResult(Verdict.INCORRECT, "wrong on small", device="cpu", configs=[config])
    outcome = outcome_of(get_problem("gemm"), _proposal("cpu-naive"), result, get_settings())
    assert outcome.findings == ["correctness"] and "wrong output" in outcome.feedback_text
    assert outcome.roofline is None
