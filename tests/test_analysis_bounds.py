"""Candidate arithmetic is evaluated within bounds: a module constant that would take the trusted process's
time or memory (`9**9**9`, `'a' * 10**10`) is refused before it runs, left unknown and named in the report."""

from __future__ import annotations

import time

import pytest

from engine.analysis import analyse_candidate
from engine.analysis.source.launch import python_launch_sites
from engine.problems.expressions import MAX_INT_BITS, ExpressionError, evaluate, evaluate_value
from engine.problems.library import BUILTIN_DIR, load_problem
from engine.problems.sizes import read_sizes
from tests.analysis_support import cache_dir

BOMBS = "N = 9**9**9\nM = 10**10**8\nS = 'a' * 10**10\n"
CANDIDATE = BOMBS + """BLOCK = 256
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x * (x > 0)
"""


def test_a_candidate_with_enormous_constants_is_analysed_in_under_a_second():
    problem = load_problem(BUILTIN_DIR / "pytorch" / "relu")
    started = time.perf_counter()
    report = analyse_candidate(problem, CANDIDATE, "python", arch="sm_90", cache_dir=cache_dir())
    assert time.perf_counter() - started < 1.0
    said = next(n for n in report.notes if "too large to evaluate" in n)
    assert "N (9 ** 387420489 would have more than" in said and "M (" in said


def test_the_launch_analysis_keeps_the_constants_it_can_evaluate():
    notes: list[str] = []
    source = BOMBS + "BLOCK = 256\nk = cp.RawKernel('__global__ void k() {}', 'k')\nk((4,), (BLOCK,), ())\n"
    started = time.perf_counter()
    sites = python_launch_sites(source, notes=notes)
    assert time.perf_counter() - started < 1.0
    assert [s.block for s in sites] == [(256, 1, 1)]
    assert notes == ["module constants too large to evaluate, left unknown: N (9 ** 387420489 would have more than "
                     "4096 bits); M (10 ** 100000000 would have more than 4096 bits)"]  # S: a string, never modelled


@pytest.mark.parametrize("text", ["9**9**9", "10**10**8", "4000000**4000000", "1 << 10**10", "2**4000 * 2**4000",
                                  "'a' * 10**10", "(1,) * 10**9"])
def test_an_expression_past_the_bounds_is_refused_at_once(text):
    started = time.perf_counter()
    with pytest.raises(ExpressionError, match="more than|longer than"):
        evaluate_value(text, {})
    assert time.perf_counter() - started < 0.1


def test_sizes_within_the_bounds_still_evaluate():
    assert evaluate("2**62 * 4 + (1 << 40)", {}) == 2**64 + 2**40
    assert evaluate(f"2**{MAX_INT_BITS - 1}", {}) == 2 ** (MAX_INT_BITS - 1)
    assert evaluate("5000000 ** 2", {}) == 25 * 10**12  # simpleeval's own MAX_POWER refused this


def test_a_kernelbench_size_past_the_bounds_is_left_to_the_file():
    sizes = read_sizes("batch_size = 16\ndim = 9**9**9\n")
    assert sizes.params == {"batch_size": 16}
