"""On a GPU, honest optimisation is accepted: work on two streams joined back, a CUDA graph replay, a custom
kernel with a small torch epilogue, Triton, CuPy and load_inline candidates are all `correct`, with no
failed check and the judge's clock agreeing with their events (static rules that fire are evidence). Every honest
fp32 summation order of a long reduction in CUDA (tests/honest/gpu_orders/) is correct too, and a kernel that
accumulates in half for an fp32 problem is rejected as reduced precision."""

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


def problem(slug: str):
    return load_problem(TESTS / "cheats" / "problems" / "pytorch" / slug)


@pytest.mark.parametrize(("path", "slug", "evidence"), [
    ("honest/gpu_two_streams.py", "relu-small", "static:extra-stream"),
    ("honest/gpu_cuda_graph.py", "relu-small", None),
    ("honest/gpu_epilogue.py", "matmul-mean-small", None),
    ("honest/gpu_triton.py", "relu-small", None),
    ("cheats/gpu_honest.py", "relu-small", None),
    ("cheats/gpu_inline_honest.py", "relu-small", None),
])
def test_honest_optimisation_is_accepted(verifier, path, slug, evidence):
    result = verifier.evaluate(problem(slug), (TESTS / path).read_text())
    print(f"\n{path}: {result.verdict} {result.message[:160]} (build {result.build_seconds or 0:.1f} s, "
          f"load {result.load_seconds or 0:.1f} s, judged in {result.worker_seconds or 0:.1f} s)")
    for finding in result.integrity:
        print(f"  {finding.check}: {'pass' if finding.passed else 'FAIL'} {finding.detail[:200]}")
    assert result.verdict == Verdict.CORRECT, result.message + result.log[-3000:]
    assert not result.failed_checks, result.failed_checks
    clock = next(f for f in result.integrity if f.check == "stream-escape")
    assert clock.passed and "too few trials" not in clock.detail
    if evidence:
        assert evidence in {f.check for f in result.integrity if f.kind == "evidence"}


def test_a_custom_kernel_with_a_torch_epilogue_is_judged_by_what_its_answer_depends_on(verifier):
    result = verifier.evaluate(problem("matmul-mean-small"), (TESTS / "honest" / "gpu_epilogue.py").read_text())
    assert result.verdict == Verdict.CORRECT
    assert result.own_kernel_share is not None and result.own_kernel_share >= 0.5
    torch_op = next(f for f in result.integrity if f.check == "torch-op")
    assert torch_op.passed and "part of the work" in torch_op.detail
    coverage = next(f for f in result.integrity if f.check == "kernel-coverage")
    assert coverage.passed and "depends on its own kernels" in coverage.detail, coverage.detail


def honest_problem(slug: str):
    return load_problem(TESTS / "honest" / "problems" / slug)


@pytest.mark.parametrize(("path", "where"), [
    ("honest/gpu_cublas_own_mean.py", ("cheats", "matmul-mean-small")),
    ("honest/gpu_cudnn_fused_epilogue.py", ("honest", "conv-relu-bias")),
    ("honest/gpu_own_diff_torch_mean.py", ("honest", "mse-loss")),
])
def test_a_library_call_for_part_of_the_work_is_honest_whatever_its_share_of_gpu_time(verifier, path, where):
    """Issue 34: the vendor library's GEMM or convolution with the rest of its own, or its own elementwise work
    finished by torch.mean, is correct, with no failed check and no flag: its answer depends on its kernels."""
    fixture = problem(where[1]) if where[0] == "cheats" else honest_problem(where[1])
    result = verifier.evaluate(fixture, (TESTS / path).read_text())
    print(f"\n{path}: {result.verdict} {result.message[:160]}; own share {result.own_kernel_share}")
    for finding in result.integrity:
        print(f"  {finding.check}: {'pass' if finding.passed else 'FAIL'} {finding.detail[:200]}")
    assert result.verdict == Verdict.CORRECT and not result.failed_checks, (result.message, result.failed_checks)
    assert not result.flagged, result.flag_reason
    coverage = next(f for f in result.integrity if f.check == "kernel-coverage")
    assert "depends on its own kernels" in coverage.detail, coverage.detail


@pytest.mark.parametrize(("path", "slug"), [
    ("serial_k.py", "matmul-long-k"),
    ("split_k_atomic.py", "matmul-long-k"),
    ("tiled.py", "matmul-long-k"),
    ("tree_k.py", "matmul-long-k"),
    ("tree_reduction.py", "row-sum-long"),
    ("atomic_reduction.py", "row-sum-long"),
])
def test_every_honest_summation_order_in_cuda_is_correct(verifier, path, slug):
    """Kernels of each kind at KernelBench sizes (K = 131072, rows of a million): a serial loop over K, split-K
    with atomics, shared-memory tiles, a per-element tree, and tree and atomic row sums, each rounding in its
    own fp32 order, are correct, unflagged, with no failed check, and their answer depends on their kernels."""
    result = verifier.evaluate(honest_problem(slug), (TESTS / "honest" / "gpu_orders" / path).read_text())
    print(f"\n{path}: {result.verdict} {result.message[:200]}; own share {result.own_kernel_share}")
    for finding in result.integrity:
        print(f"  {finding.check}: {'pass' if finding.passed else 'FAIL'} {finding.detail[:200]}")
    assert result.verdict == Verdict.CORRECT, result.message + result.log[-3000:]
    assert not result.failed_checks, result.failed_checks
    assert not result.flagged, result.flag_reason
    coverage = next(f for f in result.integrity if f.check == "kernel-coverage")
    assert coverage.passed and "depends on its own kernels" in coverage.detail, coverage.detail


def test_half_accumulation_in_cuda_is_rejected_as_reduced_precision(verifier):
    """Inputs cut to half and summed in a half running sum, for an fp32 problem: the static precision rule names
    `__half` before anything runs, and with the static rules off the answer is wrong by the size of error
    half-precision arithmetic gives (as tests/test_verify_tolerance.py's torch shortcut is on a CPU)."""
    source = (TESTS / "cheats" / "half_accumulate_cuda.py").read_text()
    matmul = honest_problem("matmul-long-k")
    result = verifier.evaluate(matmul, source)
    print(f"\nhalf_accumulate_cuda.py: {result.verdict} {result.message[:300]}")
    assert result.verdict != Verdict.CORRECT
    assert result.verdict == Verdict.INTEGRITY_VIOLATION and "static:precision" in {
        f.check for f in result.integrity if not f.passed}, result.message
    runtime_only = Verifier(pool=verifier.pool, settings=verifier.settings,
                            options=replace(OPTIONS, static_checks=False, runtime_checks=False, timing=False))
    result = runtime_only.evaluate(matmul, source)
    print(f"half_accumulate_cuda.py, static rules off: {result.verdict} {result.message[:300]}")
    assert result.verdict == Verdict.INCORRECT, result.message + result.log[-3000:]
    assert "TF32 or half-precision" in result.message and "units of honest float32 rounding" in result.message
