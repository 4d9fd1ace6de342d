"""Tolerance that follows the arithmetic: every honest fp32 order of a long reduction is correct, however it
rounds beside the library's order, and reduced-precision arithmetic for an fp32 problem is caught and named."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from engine.problems import load_problem
from engine.schema.verdict import Verdict
from engine.verify.evaluate import VerifyOptions
from engine.verify.judge.correctness import compare
from tests.verify_support import verifier_in_fresh_home

HONEST = Path(__file__).parent / "honest"
OPTIONS = VerifyOptions(timing=False, timeout_s=300, runtime_checks=False)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), OPTIONS) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def matmul():
    return load_problem(HONEST / "problems" / "matmul-long-k", source="user")


def _verify(verifier, problem, name: str):
    result = verifier.evaluate(problem, (HONEST / "arithmetic" / f"{name}.py").read_text())
    print(f"\n{name}: {result.verdict}: {result.message}")
    return result


@pytest.mark.slow
@pytest.mark.parametrize("order", ["serial_k", "split_k", "tree_k"])
def test_every_honest_fp32_order_of_a_long_reduction_is_correct(verifier, matmul, order):
    result = _verify(verifier, matmul, order)
    assert result.verdict == Verdict.CORRECT, result.message


@pytest.mark.slow
@pytest.mark.parametrize("shortcut", ["half_accumulate", "tf32_inputs"])
def test_reduced_precision_for_an_fp32_problem_is_caught_and_named(verifier, matmul, shortcut):
    """Caught at run time, with the static rules off (they name `.half()` before anything runs)."""
    runtime_only = verifier.__class__(pool=verifier.pool, options=OPTIONS.__class__(
        **{**OPTIONS.__dict__, "static_checks": False}), settings=verifier.settings)
    result = _verify(runtime_only, matmul, shortcut)
    assert result.verdict == Verdict.INCORRECT, result.message
    assert "TF32 or half-precision" in result.message and "units of honest float32 rounding" in result.message


def test_honest_orders_and_tf32_lie_orders_of_magnitude_apart_on_the_honest_scale():
    """K = 131072: a serial fp32 sum is within a hundredth of a unit of u·Σ|aᵢbᵢ|, TF32 inputs tens of units
    away, so the allowance (ORDER_SCALE units) sits between them with room on both sides."""
    gen = torch.Generator().manual_seed(3)
    a, b = torch.randn(4, 131072, generator=gen), torch.randn(131072, 4, generator=gen)
    ref = a.double() @ b.double()
    magnitude = a.double().abs() @ b.double().abs()
    serial = (a[:, :, None] * b[None, :, :]).cumsum(dim=1)[:, -1, :]
    tf32 = (a.view(torch.int32) & ~0x1FFF).view(torch.float32) @ (b.view(torch.int32) & ~0x1FFF).view(torch.float32)
    honest = compare(serial, ref, ref.float(), rtol=1e-4, atol=1e-5, magnitude=magnitude)
    shortcut = compare(tf32, ref, ref.float(), rtol=1e-4, atol=1e-5, magnitude=magnitude)
    assert honest.ok and honest.max_scaled_error < 0.1, honest
    assert not shortcut.ok and shortcut.max_scaled_error > 16 and "TF32 or half-precision" in shortcut.message
