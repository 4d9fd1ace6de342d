"""Malformed problems are rejected with a message naming the file and the cause; the rest still load."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from engine.problem_import import import_path, validate
from engine.problems import ProblemError, load_problem, scan

GOOD_REFERENCE = textwrap.dedent("""
    import torch
    import torch.nn as nn

    batch_size = 8
    dim = 64

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    def get_inputs():
        return [torch.randn(batch_size, dim)]

    def get_init_inputs():
        return []
""")

GOOD_TOML = textwrap.dedent("""
    title = "ReLU"
    kind = "pytorch"
    [model]
    flops = "batch_size * dim"
    bytes = "8 * batch_size * dim"
    [[configs]]
    name = "small"
    params = { batch_size = 2, dim = 16 }
    [[configs]]
    name = "odd"
    hidden = true
    params = { batch_size = 3, dim = 17 }
""")


def write_problem(root: Path, slug: str, reference: str = GOOD_REFERENCE, toml: str = GOOD_TOML,
                  kind: str = "pytorch") -> Path:
    folder = root / kind / slug
    folder.mkdir(parents=True)
    (folder / ("reference.py" if kind == "pytorch" else "reference.c")).write_text(reference)
    (folder / "problem.toml").write_text(toml)
    return folder


def test_a_good_problem_loads_with_its_configs_and_model(tmp_path):
    problem = load_problem(write_problem(tmp_path, "relu"))
    assert [c.name for c in problem.configs] == ["small", "odd"]
    assert [c.name for c in problem.hidden_configs] == ["odd"]
    assert problem.flops(problem.configs[0]) == 32
    assert problem.arithmetic_intensity(problem.configs[0]) == pytest.approx(0.125)
    validate(problem)


def test_syntax_error_names_the_file_and_line(tmp_path):
    folder = write_problem(tmp_path, "broken", reference="def f(:\n    pass\n")
    with pytest.raises(ProblemError, match=r"reference\.py: syntax error at line 1"):
        load_problem(folder)


@pytest.mark.parametrize("name", ["Model", "get_inputs", "get_init_inputs"])
def test_missing_kernelbench_name_is_rejected(tmp_path, name):
    reference = GOOD_REFERENCE.replace(f"def {name}(", "def renamed(").replace(f"class {name}(", "class Renamed(")
    with pytest.raises(ProblemError, match=f"missing {name}"):
        load_problem(write_problem(tmp_path, "missing", reference=reference))


def test_get_inputs_that_raises_is_rejected_with_its_exception(tmp_path):
    reference = GOOD_REFERENCE.replace("return [torch.randn(batch_size, dim)]", "raise RuntimeError('no data')")
    problem = load_problem(write_problem(tmp_path, "raises", reference=reference))
    with pytest.raises(ProblemError, match=r"get_inputs\(\) raised RuntimeError: no data"):
        validate(problem)


def test_c_reference_that_does_not_compile_is_rejected(tmp_path):
    toml = textwrap.dedent("""
        title = "Scale"
        kind = "c"
        entry = "scale"
        [[configs]]
        name = "small"
        params = { N = 4 }
        [[args]]
        name = "n"
        type = "int"
        value = "N"
        [[args]]
        name = "x"
        type = "float*"
        size = "N"
        intent = "inout"
    """)
    problem = load_problem(write_problem(tmp_path, "scale", reference="void scale(int n, float *x) { x[0] = }\n",
                                         toml=toml, kind="c"))
    with pytest.raises(ProblemError, match=r"reference\.c: does not compile"):
        validate(problem)


def test_invalid_toml_is_rejected(tmp_path):
    with pytest.raises(ProblemError, match=r"problem\.toml: invalid TOML"):
        load_problem(write_problem(tmp_path, "bad-toml", toml="title = \n"))


def test_model_expression_over_unknown_param_is_rejected(tmp_path):
    toml = GOOD_TOML.replace('flops = "batch_size * dim"', 'flops = "batch_size * width"')
    with pytest.raises(ProblemError, match="configuration 'small'"):
        load_problem(write_problem(tmp_path, "bad-expr", toml=toml))


def test_one_broken_problem_does_not_hide_the_others(tmp_path):
    write_problem(tmp_path, "relu")
    write_problem(tmp_path, "broken", reference="def f(:\n")
    found = scan(tmp_path)
    assert [p.slug for p in found.problems] == ["relu"]
    assert len(found.errors) == 1 and "broken" in str(found.errors[0])


def test_kernelbench_level_folder_imports_unchanged_with_derived_configs(tmp_path):
    level = tmp_path / "KernelBench" / "level1"
    level.mkdir(parents=True)
    (level / "19_ReLU.py").write_text(GOOD_REFERENCE)
    (level / "20_Broken.py").write_text("import torch\nclass Model: pass\n")
    report = import_path(tmp_path / "KernelBench", dest_root=tmp_path / "home")
    assert [p.slug for p in report.imported] == ["kb-level1-19-relu"]
    problem = report.imported[0]
    assert (problem.folder / "reference.py").read_text() == GOOD_REFERENCE
    assert [c.params["batch_size"] for c in problem.configs] == [1, 8, 5]
    assert problem.configs[-1].hidden
    assert len(report.errors) == 1
    assert "20_Broken.py" in str(report.errors[0]) and "missing get_inputs" in str(report.errors[0])


def test_single_uploaded_file_that_raises_is_rejected_and_not_kept(tmp_path):
    upload = tmp_path / "mine.py"
    upload.write_text(GOOD_REFERENCE.replace("return []", "raise ValueError('bad init')"))
    report = import_path(upload, dest_root=tmp_path / "home")
    assert not report.imported
    assert "mine.py" in str(report.errors[0]) and "get_init_inputs() raised ValueError: bad init" in str(
        report.errors[0])
    assert not any((tmp_path / "home").rglob("reference.py"))
