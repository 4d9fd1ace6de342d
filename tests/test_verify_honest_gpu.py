"""On a GPU, honest optimisation is accepted: work on two streams joined back, a CUDA graph replay, a custom
kernel with a small torch epilogue, Triton, CuPy and load_inline candidates are all `correct`, with no
failed check and the judge's clock agreeing with their events (static rules that fire are evidence)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.problems import load_problem
from engine.verify.evaluate import VerifyOptions
from engine.verify.prepare import TimingOptions
from engine.verify.records import Verdict
from tests.verify_support import gpu_verifier

pytestmark = pytest.mark.gpu

TESTS = Path(__file__).parent
OPTIONS = VerifyOptions(timing_policy=TimingOptions(min_trials=30, min_seconds=0.3, max_trials=600, max_seconds=3.0),
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


def test_a_custom_kernel_with_a_torch_epilogue_is_judged_by_gpu_time_not_op_names(verifier):
    result = verifier.evaluate(problem("matmul-mean-small"), (TESTS / "honest" / "gpu_epilogue.py").read_text())
    assert result.verdict == Verdict.CORRECT
    assert result.own_kernel_share is not None and result.own_kernel_share >= 0.5
    torch_op = next(f for f in result.integrity if f.check == "torch-op")
    assert torch_op.passed and "epilogue" in torch_op.detail
