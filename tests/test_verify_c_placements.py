"""A C problem timed on the CPU whose outputs straddle the placement rotation's size limit: a large array,
one placement for every timed call, beside a one-float sum that rotates through eight. Timed calls chosen
by the judge after each block are checked, whatever placement they ran on; a candidate that leaves the sum
unwritten on placements it has not met before is caught there, and only there."""

from __future__ import annotations

import textwrap

import pytest

from engine.problems.library import load_problem
from engine.schema.verdict import Verdict
from engine.verify.evaluate import VerifyOptions
from engine.verify.prepare import TimingOptions
from engine.wire.c_entry import ROTATED_BYTES
from engine.wire.policy import TrialPolicy
from tests.verify_support import verifier_in_fresh_home

N = ROTATED_BYTES // 4 + 4096  # floats: `y` keeps one placement, `total` rotates
TOML = textwrap.dedent(f"""
    title = "Double and sum"
    kind = "c"
    entry = "double_sum"
    tags = ["elementwise"]
    [model]
    flops = "2 * N"
    bytes = "8 * N"
    [[configs]]
    name = "small"
    params = {{ N = {N} }}
    [[args]]
    name = "n"
    type = "int"
    value = "N"
    [[args]]
    name = "x"
    type = "const float*"
    size = "N"
    [[args]]
    name = "y"
    type = "float*"
    size = "N"
    intent = "out"
    [[args]]
    name = "total"
    type = "float*"
    size = "1"
    intent = "out"
""")
BODY = "double s = 0; for (int i = 0; i < n; i++) { y[i] = 2.0f * x[i]; s += x[i]; }"
HONEST = f"void double_sum(int n, const float *x, float *y, float *total) {{ {BODY} total[0] = (float)s; }}\n"
# Writes the sum only into the first two `total` buffers it meets: the correctness calls' and the first
# timing placement's. Every call it is timed on still does the whole loop.
FORGETFUL = ("static float *met[2];\n"
             f"void double_sum(int n, const float *x, float *y, float *total) {{ {BODY}\n"
             "  for (int k = 0; k < 2; k++) { if (!met[k]) met[k] = total; if (met[k] == total) { total[0] = (float)s; "
             "return; } } }\n")


@pytest.fixture(scope="module")
def problem(tmp_path_factory):
    folder = tmp_path_factory.mktemp("problems") / "double-sum"
    folder.mkdir()
    (folder / "problem.toml").write_text(TOML)
    (folder / "reference.c").write_text(HONEST)
    return load_problem(folder, source="user")


@pytest.mark.slow
def test_timed_calls_on_any_placement_are_checked(problem, tmp_path_factory):
    options = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=30, min_seconds=0.0, max_trials=30,
                                                                    flush_bytes=2**20)), timeout_s=120)
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), options) as verifier:
        honest = verifier.evaluate(problem, HONEST, "c")
        forgetful = verifier.evaluate(problem, FORGETFUL, "c")
    assert honest.verdict == Verdict.CORRECT, honest.message
    timed = next(f for f in honest.integrity if f.check == "timed-output")
    assert timed.passed and "chosen after their blocks ran" in timed.detail, timed.detail
    assert int(timed.detail.split()[0]) >= 2 * 3  # two a block, at least three blocks
    assert forgetful.verdict != Verdict.CORRECT, forgetful.message
    failed = next(f for f in forgetful.integrity if f.check == "timed-output")
    assert not failed.passed and "chosen after its block ran" in failed.detail, failed.detail
    assert "never written" in failed.detail or "total" in failed.detail, failed.detail
    assert all(c.ok for c in forgetful.configs), "the correctness calls were right: only the timing shows it"
