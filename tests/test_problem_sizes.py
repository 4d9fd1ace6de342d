"""A KernelBench file's sizes are read without running it, and a configuration's sizes reach everything
the file computes from them when it loads."""

from __future__ import annotations

import textwrap

import pytest

from engine.problems.derive import WRITTEN, plan_configs
from engine.problems.sizes import read_sizes
from engine.wire.reference_module import load_module


def sizes_of(text: str):
    return read_sizes(textwrap.dedent(text))


def test_sizes_written_as_arithmetic_on_numbers_are_read():
    sizes = sizes_of("""
        N = 2048 * 2
        K = 131072 * 8  # a comment
        eps = 1e-5
        low = -1.0
    """)
    assert sizes.params == {"N": 4096, "K": 1048576, "eps": 1e-5, "low": -1.0}


def test_a_size_computed_from_another_is_known_but_not_set_by_a_configuration():
    sizes = sizes_of("""
        N = 8
        dim = N * 2
        groups = N
    """)
    assert sizes.params == {"N": 8}
    assert sizes.values["dim"] == 16
    assert sizes.depends_on == {"dim": ("N",), "groups": ("N",)}


def test_chained_assignment_sets_every_name():
    assert sizes_of("height = width = 128\n").params == {"height": 128, "width": 128}


def test_calls_and_unknown_names_are_never_evaluated():
    sizes = sizes_of("""
        import os
        a = len("xx")
        b = os.getpid()
        c = a + 1
        d = __import__("os").system("true")
        e = 3
    """)
    assert sizes.params == {"e": 3}
    assert "c" not in sizes.values


def test_booleans_and_tuples_are_not_sizes():
    sizes = sizes_of("""
        bias = True
        kernel_size = (3, 5)
        batch_size = 4
    """)
    assert sizes.params == {"batch_size": 4}


def test_the_batch_is_the_first_batch_like_settable_integer():
    assert sizes_of("M = 4\nbatch_size = 8\n").batch_name == "batch_size"
    assert sizes_of("N = 2048 * 2\n").batch_name == "N"
    assert sizes_of("image_size = 224\n").batch_name is None


DEPENDENT = textwrap.dedent("""
    batch_size = 2
    num_classes = 1000
    input_shape = (batch_size, 3, 224, 224)
    height = width = 8
    area = height * width

    def get_inputs():
        return input_shape
""")


def test_a_configured_size_reaches_what_the_file_computes_from_it():
    module = load_module(DEPENDENT, {"batch_size": 5})
    assert module.input_shape == (5, 3, 224, 224)
    assert module.get_inputs() == (5, 3, 224, 224)


def test_one_name_of_a_chained_assignment_can_be_configured():
    module = load_module(DEPENDENT, {"height": 3})
    assert (module.height, module.width, module.area) == (3, 8, 24)


def test_a_configured_name_the_file_never_assigns_is_still_set():
    assert load_module(DEPENDENT, {"extra": 7}).extra == 7


def test_tracebacks_keep_the_files_own_line_numbers():
    source = "batch_size = 2\n\ndef f():\n    raise ValueError('x')\n"
    module = load_module(source, {"batch_size": 3}, filename="mine.py")
    with pytest.raises(ValueError) as caught:
        module.f()
    frame = caught.tb.tb_next
    assert (frame.tb_frame.f_code.co_filename, frame.tb_lineno) == ("mine.py", 4)


def test_derived_configurations_are_small_as_written_and_a_hidden_odd_batch():
    plan = plan_configs(sizes_of("batch_size = 8\ndim = 64\n"))
    assert [p.role for p in plan] == ["small", "written", "hidden"]
    assert [c.params["batch_size"] for c in plan[0].choices] == [1, 2]
    assert plan[1].choices[0].name == WRITTEN and plan[1].choices[0].params == {"batch_size": 8, "dim": 64}
    assert [c.params["batch_size"] for c in plan[2].choices] == [5, 9]
    assert all(c.hidden for c in plan[2].choices)


def test_an_expression_size_gets_derived_configurations_named_by_the_size():
    plan = plan_configs(sizes_of("N = 2048 * 2\n"))
    assert [p.choices[0].params["N"] for p in plan] == [1, 4096, 2049]
    assert [p.choices[0].name for p in plan] == ["N-1", WRITTEN, "N-2049"]


def test_a_written_batch_of_one_still_gets_a_hidden_configuration():
    plan = plan_configs(sizes_of("batch_size = 1\n"))
    assert [p.role for p in plan] == ["written", "hidden"]
    assert plan[1].choices[0].params["batch_size"] == 3


def test_without_a_batch_like_size_only_the_written_configuration_remains():
    plan = plan_configs(sizes_of("image_size = 224\n"))
    assert [p.role for p in plan] == ["written"]
