"""Importing a C program whose own results are rounding: the import builds the reference a second time, differing
only in rounding (fused multiply-adds, reordered sums, as a GPU compiler does), runs both on the same inputs, and
where they disagree beyond the tolerance says so in one line naming the outputs and configurations, keeps that
with the problem and marks those configurations, so that an incorrect verdict there says the mismatch may be
rounding. A program whose results another rounding moves only within the tolerance imports unmarked."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import app
from engine.problem_import.cimport import import_program
from engine.problem_import.cimport.rounding import has_fma
from engine.problems import load_problem
from engine.schema.verdict import ConfigResult, Verdict
from engine.verify.evaluate import VerifyOptions
from engine.verify.prepare import rounding_caveat
from tests.verify_support import verifier_in_fresh_home

FIXTURES = Path(__file__).parent / "fixtures" / "c_rounding"
RESIDUAL = FIXTURES / "sensitive" / "residual.c"
HORNER = FIXTURES / "steady" / "horner.c"
CONFIGS = ("small", "as-written", "odd")

needs_fma = pytest.mark.skipif(not has_fma(), reason="these programs' rounding is a fused multiply-add's, and this "
                                                    "CPU has no FMA instruction to build the twin with")


@pytest.fixture(scope="module")
def residual(tmp_path_factory):
    done = import_program(RESIDUAL, tmp_path_factory.mktemp("imported"))
    assert done.problem is not None, done.error
    return done


@pytest.fixture(scope="module")
def horner(tmp_path_factory):
    done = import_program(HORNER, tmp_path_factory.mktemp("imported"))
    assert done.problem is not None, done.error
    return done


def test_fma_is_read_from_the_cpus_flags(tmp_path):
    with_fma, fma4_only = tmp_path / "with", tmp_path / "fma4"
    with_fma.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx fma avx2\n")
    fma4_only.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx fma4\n")
    assert has_fma(with_fma) and not has_fma(fma4_only) and not has_fma(tmp_path / "missing")


@needs_fma
def test_results_that_change_with_rounding_are_said_in_one_line_naming_outputs_and_configurations(residual):
    [warning] = residual.warnings
    assert warning.startswith(f"{RESIDUAL}: the program's own results change with rounding: residual built with "
                              "fused multiply-adds and reordered sums gives other r on configuration 'small' (128 of "
                              "128 elements of r beyond rtol 1e-07, atol 1e-09")
    assert "also r on 'as-written', 'odd')" in warning and "p on" not in warning
    assert "ill-conditioned inputs; no candidate can be judged on them as is — give inputs in inputs.py or widen " \
           "the tolerance" in warning
    assert "\n" not in warning


@needs_fma
def test_the_finding_is_kept_with_the_problem_and_its_configurations_marked(residual):
    problem = load_problem(residual.problem.folder, source="import")
    assert problem.warnings == (residual.warnings[0].removeprefix(f"{RESIDUAL}: "),)
    assert [(c.name, c.rounding_sensitive) for c in problem.configs] == [(name, ("r",)) for name in CONFIGS]
    assert "rounding-sensitive" in problem.tags
    assert "p is written by residual but main never prints it (scratch?); compared like every output" in problem.notes


@needs_fma
def test_results_another_rounding_moves_within_the_tolerance_import_unmarked(horner):
    assert horner.warnings == [] and horner.problem.warnings == ()
    assert all(c.rounding_sensitive == () for c in horner.problem.configs)
    assert "rounding-sensitive" not in horner.problem.tags
    assert set(horner.rounding) == set(CONFIGS)
    assert all(check.moved and check.sensitive == () for check in horner.rounding.values())  # it did round otherwise


@needs_fma
def test_an_incorrect_verdict_on_a_marked_output_says_the_mismatch_may_be_rounding(residual):
    def wrong(array: str) -> list[ConfigResult]:
        return [ConfigResult("small", False, ok=False, first_mismatch=f"{array} at [3]: got 0.25, expected 0")]

    caveat = rounding_caveat(residual.problem, wrong("r"))
    assert caveat.startswith("the reference's own r on 'small' change with rounding") and "may be rounding" in caveat
    assert rounding_caveat(residual.problem, wrong("p")) is None  # p does not move with rounding: a real mismatch
    assert rounding_caveat(residual.problem, [ConfigResult("small", False, ok=True)]) is None


@needs_fma
def test_the_cli_prints_the_warning_on_import_and_on_show(refinery_home):
    runner = CliRunner()
    imported = runner.invoke(app, ["problems", "import", str(RESIDUAL)])
    assert imported.exit_code == 0, imported.output
    assert "warning" in imported.output and "change with rounding" in " ".join(imported.output.split())
    shown = runner.invoke(app, ["problems", "show", "c-residual", "--no-probe"])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert "warning the program's own results change with rounding" in text
    assert "note p is written by residual but main never prints it" in text


@needs_fma
@pytest.mark.slow
def test_a_candidate_that_rounds_as_a_gpu_does_is_judged_incorrect_with_the_reason(residual, tmp_path_factory):
    """The program's own kernel passes; the same kernel with the fused multiply-add written out (what a GPU
    compiler makes of it) fails, and the verdict says that on this configuration that may be rounding."""
    problem = residual.problem
    own = problem.implementation("cpu-naive").source
    fused = own.replace("(x[i] * y[i] - p[i])", "fma(x[i], y[i], -p[i])")
    assert fused != own
    options = VerifyOptions(timing=False, timeout_s=120)
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), options) as verifier:
        passed = verifier.evaluate(problem, own, "c")
        failed = verifier.evaluate(problem, fused, "c")
    assert passed.verdict == Verdict.CORRECT, passed.message
    assert failed.verdict == Verdict.INCORRECT
    assert "— the reference's own r on 'small' change with rounding" in failed.message
    assert "may be rounding, not a bug" in failed.message
