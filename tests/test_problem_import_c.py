"""Importing C programs as people have them: a PolyBench-style program (its own header with datasets, the
suite's polybench.h found by walking up, init_array, a kernel_* function, main) and a plain program whose
main sets the sizes and the data. Each becomes a problem folder in our format whose inputs are the
program's own initialisation, whose reference is the program's kernel unchanged, and whose first
implementation is a one-thread CUDA port; what the importer cannot tell it asks for by name."""

from __future__ import annotations

import runpy
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from engine.cli import app
from engine.problem_import import import_path
from engine.problem_import.cimport import ImportOptions, import_program
from engine.schema.verdict import Verdict
from engine.verify.evaluate import VerifyOptions
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy
from tests.verify_support import verifier_in_fresh_home

FIXTURES = Path(__file__).parent / "fixtures" / "c_import"
SMOOTH = FIXTURES / "suite" / "stencils" / "smooth" / "smooth.c"
SCALE_ADD = FIXTURES / "plain" / "scale_add.c"
SQUARE = FIXTURES / "opaque" / "square.c"
FAST = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=3, min_seconds=0.0, max_trials=5,
                                                             max_seconds=1.0, flush_bytes=1 << 20)), timeout_s=120)


@pytest.fixture(scope="module")
def dest(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("imported")


@pytest.fixture(scope="module")
def smooth(dest):
    done = import_program(SMOOTH, dest)
    assert done.problem is not None, done.error
    return done


@pytest.fixture(scope="module")
def scale_add(dest):
    done = import_program(SCALE_ADD, dest)
    assert done.problem is not None, done.error
    return done


def _inputs(problem):
    return runpy.run_path(str(problem.inputs_path))


def test_a_polybench_style_program_gets_its_datasets_as_configurations(smooth):
    configs = [(c.name, c.hidden, c.params) for c in smooth.problem.configs]
    assert configs == [("small", False, {"TSTEPS": 4, "N": 40, "M": 30}),
                       ("medium", False, {"TSTEPS": 8, "N": 120, "M": 100}),
                       ("odd", True, {"TSTEPS": 7, "N": 81, "M": 65}),
                       ("mini", True, {"TSTEPS": 2, "N": 10, "M": 12})]


def test_the_kernels_arguments_come_with_sizes_values_and_what_it_writes(smooth):
    args = {a.name: (a.type, a.value or a.size, a.intent) for a in smooth.problem.args}
    assert args == {"n": ("int", "N", "in"), "m": ("int", "M", "in"), "alpha": ("double", "0.25", "in"),
                    "A": ("double*", "N * M", "inout"), "x": ("const double*", "M", "in"),
                    "y": ("double*", "N", "out"), "size_TSTEPS": ("int", "TSTEPS", "in")}
    assert smooth.problem.entry == "kernel_smooth_flat" and smooth.problem.dtype == "float64"


def test_the_reference_is_the_programs_own_kernel_with_a_flat_entry_point(smooth):
    text = smooth.problem.reference_source
    original = SMOOTH.read_text()
    kernel = original[original.index("static\nvoid kernel_smooth"):original.index("int main")].strip()
    assert kernel in text
    assert "void kernel_smooth_flat(int n, int m, double alpha, double *A, const double *x, double *y, " \
           "int size_TSTEPS)" in text
    assert "(double (*)[m + 0])A" in text or "(double (*)[m])A" in text
    assert "int main" not in text and "void init_array" not in text
    assert "left out by the importer" in text


def test_inputs_are_the_programs_own_initialisation(smooth):
    module = _inputs(smooth.problem)
    own = module["own_initialisation"]({"TSTEPS": 4, "N": 40, "M": 30}, np.random.default_rng(0))
    i, j = np.meshgrid(np.arange(40), np.arange(30), indexing="ij")
    assert np.array_equal(own["A"], ((i * j + 1) % 40) / 40)
    assert np.array_equal(own["x"], 1 + np.arange(30) / 30)
    assert own["alpha"] == 0.25


def test_each_check_scales_the_programs_inputs_by_a_fresh_factor(smooth):
    module = _inputs(smooth.problem)
    params = {"TSTEPS": 4, "N": 40, "M": 30}
    own = module["own_initialisation"](params, np.random.default_rng(0))["A"].reshape(-1)
    first = module["make_inputs"](params, np.random.default_rng(1))["A"]
    second = module["make_inputs"](params, np.random.default_rng(2))["A"]
    assert not np.array_equal(first, second)
    ratio = first[own != 0] / own[own != 0]
    assert np.allclose(ratio, ratio[0]) and 0.5 <= ratio[0] <= 1.5


def test_the_reference_ran_on_the_cpu_at_every_configuration(smooth):
    assert set(smooth.seconds) == {"small", "medium", "odd", "mini"}
    assert all(s > 0 for s in smooth.seconds.values())


def test_an_array_the_kernel_writes_but_main_never_prints_is_noted(smooth):
    assert any("A is written by kernel_smooth but main never prints it" in n for n in smooth.notes)


def test_the_first_implementation_is_a_one_thread_cuda_port_that_compiles(smooth):
    naive = smooth.problem.implementation("naive")
    assert naive.strategy == "naive" and "not a fast kernel" in naive.summary
    source = naive.source
    assert "kernel_smooth_naive<<<1, 1>>>" in source and 'extern "C" void kernel_smooth_flat(' in source
    assert "__device__ int TSTEPS;" in source
    assert smooth.port_compiles is True


def test_the_port_emulated_on_the_cpu_gives_the_programs_own_results(smooth):
    assert smooth.port_matches is True


def test_a_plain_program_gets_a_small_its_written_and_a_hidden_odd_size(scale_add):
    configs = [(c.name, c.hidden, c.params) for c in scale_add.problem.configs]
    assert configs == [("small", False, {"N": 1024}), ("as-written", False, {"N": 4096}),
                       ("odd", True, {"N": 2049})]
    args = {a.name: (a.type, a.value or a.size, a.intent) for a in scale_add.problem.args}
    assert args == {"n": ("int", "N", "in"), "a": ("float", "2.5", "in"), "x": ("const float*", "N", "in"),
                    "y": ("float*", "N", "inout")}


def test_a_plain_programs_rand_becomes_the_checks_own_generator(scale_add):
    module = _inputs(scale_add.problem)
    first = module["make_inputs"]({"N": 64}, np.random.default_rng(1))
    second = module["make_inputs"]({"N": 64}, np.random.default_rng(2))
    assert not np.array_equal(first["y"], second["y"]) and ((first["y"] >= 0) & (first["y"] <= 1.5)).all()
    own = module["own_initialisation"]({"N": 64}, np.random.default_rng(1))["x"]
    assert np.allclose(own, np.sin(np.float32(0.01) * np.arange(64, dtype=np.float32)), rtol=1e-6)


def test_an_array_whose_length_main_does_not_say_is_asked_for_by_name(dest):
    done = import_program(SQUARE, dest)
    assert done.problem is None
    assert "argument 'v' of square" in done.error and "--size v=" in done.error


def test_a_length_given_by_the_user_imports_with_random_inputs_in_the_programs_range(dest):
    done = import_program(SQUARE, dest, ImportOptions(sizes={"v": "n"}))
    assert done.problem is not None, done.error
    assert next(a for a in done.problem.args if a.name == "v").size == "n"
    assert any("could not be translated (a call of make_data()" in n for n in done.notes)
    values = _inputs(done.problem)["make_inputs"]({"n": 100}, np.random.default_rng(3))["v"]
    assert values.min() >= -6 and values.max() <= 6


def test_a_missing_polybench_header_is_named_with_where_to_point(tmp_path):
    alone = tmp_path / "smooth"
    alone.mkdir()
    for name in ("smooth.c", "smooth.h"):
        (alone / name).write_text((SMOOTH.parent / name).read_text())
    done = import_program(alone / "smooth.c", tmp_path / "home")
    assert done.problem is None and "polybench.h" in done.error and "--include" in done.error
    found = import_program(alone / "smooth.c", tmp_path / "home",
                           ImportOptions(includes=(FIXTURES / "suite" / "utilities",)))
    assert found.problem is not None, found.error


def test_a_folder_of_programs_imports_each_and_reports_the_one_it_cannot(tmp_path):
    report = import_path(FIXTURES, dest_root=tmp_path)
    assert sorted(p.slug for p in report.imported) == ["c-cancel", "c-scale-add", "c-twofile", "polybench-smooth"]
    assert [e.path.name for e in report.errors] == ["square.c"]


def test_the_cli_imports_a_c_file_and_refuses_other_files(refinery_home, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["problems", "import", str(SCALE_ADD)])
    assert result.exit_code == 0, result.output
    assert "imported c-scale-add (3 configurations, 1 hidden)" in result.output
    other = tmp_path / "notes.txt"
    other.write_text("x")
    refused = runner.invoke(app, ["problems", "import", str(other)])
    assert refused.exit_code == 1
    assert "expected a KernelBench .py file, a C program (.c) or a problem folder" in " ".join(refused.output.split())


def test_the_cli_passes_a_length_the_program_does_not_say(refinery_home):
    result = CliRunner().invoke(app, ["problems", "import", str(SQUARE), "--size", "v=n"])
    assert result.exit_code == 0, result.output
    assert "imported c-square" in result.output


@pytest.mark.slow
def test_the_harness_checks_candidates_on_the_imported_problem(smooth, tmp_path_factory):
    """The judge and the runner make the program's inputs from inputs.py: the kernel itself passes on every
    configuration, one that skips the smoothing fails, and the CUDA port builds and waits for a GPU."""
    problem = smooth.problem
    honest = problem.implementation("cpu-naive").source
    lazy = honest.replace("for (t = 0; t < TSTEPS; t++)", "for (t = 0; t < 0; t++)")
    assert lazy != honest
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), FAST) as verifier:
        passed = verifier.evaluate(problem, honest, "c")
        failed = verifier.evaluate(problem, lazy, "c")
        port = verifier.evaluate(problem, problem.implementation("naive").source, "cuda")
    assert passed.verdict == Verdict.CORRECT, passed.message
    assert {c.name for c in passed.configs} == {"small", "medium", "odd", "mini"}
    assert failed.verdict == Verdict.INCORRECT
    assert port.verdict == Verdict.NEEDS_GPU, port.message


def test_a_program_split_into_files_imports_with_the_kernel_from_its_own_file(dest):
    done = import_program(FIXTURES / "twofile" / "main.c", dest)
    assert done.problem is not None, done.error
    assert done.problem.slug == "c-twofile" and done.problem.entry == "blur_flat"
    args = {a.name: (a.type, a.value or a.size, a.intent) for a in done.problem.args}
    assert args == {"n": ("int", "LEN", "in"), "in": ("const double*", "LEN", "in"), "out": ("double*", "LEN", "out")}
    assert "#define RADIUS 2" in done.problem.reference_source  # the same in every configuration: left as written
    assert done.port_compiles and done.port_matches


def test_outputs_that_are_mostly_rounding_are_pointed_out(dest):
    done = import_program(FIXTURES / "illcond" / "cancel.c", dest)
    assert done.problem is not None, done.error
    note = next(n for n in done.notes if "outputs move beyond the tolerance" in n)
    assert "y (" in note and "fused multiply-add" in note
