"""The runner's switch that skips the candidate's own launches (runner/knockout.py), on the CPU: the wrappers
see every way of launching own code, skip it only when asked, and count what went through them."""

from __future__ import annotations

import types

import pytest

from engine.untrusted.runner import knockout
from engine.wire.replies import REPLIES, MalformedReply, decode


@pytest.fixture(autouse=True)
def restored():
    """install() wraps process-wide names: put them back for the other tests in this process."""
    from torch.utils import cpp_extension

    try:
        import cupy
    except ImportError:
        cupy = None
    names = ("RawKernel", "RawModule", "ElementwiseKernel", "ReductionKernel")
    saved = {name: getattr(cupy, name) for name in names} if cupy is not None else {}
    loaders = (cpp_extension.load_inline, cpp_extension.load)
    yield
    for name, value in saved.items():
        setattr(cupy, name, value)
    cpp_extension.load_inline, cpp_extension.load = loaders


def test_a_gated_call_runs_until_the_switch_skips_it_and_both_are_counted():
    switch, ran = knockout.SWITCH, []
    launch = knockout.gated(lambda value: ran.append(value) or value)
    before = switch.launches
    assert launch(1) == 1 and switch.launches == before + 1
    with switch.skipped_launches():
        assert launch(2) is None and switch.skipped == 1
    assert ran == [1] and not switch.skipping
    assert launch(3) == 3


def test_an_extensions_functions_are_gated_and_its_other_attributes_are_left_alone():
    module = types.SimpleNamespace(forward=lambda x: x + 1, VERSION="1", Kind=int)
    gated = knockout.GatedModule(module)
    assert gated.forward(1) == 2 and gated.VERSION == "1" and gated.Kind is int
    with knockout.SWITCH.skipped_launches():
        assert gated.forward(1) is None


def test_cupy_kernels_and_modules_built_after_install_go_through_the_switch():
    cupy = pytest.importorskip("cupy")
    knockout.install()
    knockout.install()  # twice: nothing wrapped twice
    assert cupy.RawKernel.knockout_gated and cupy.RawModule.__mro__[1].__name__ == "RawModule"
    assert not getattr(cupy.RawKernel.__mro__[1], "knockout_gated", False)
    kernel = cupy.RawKernel('extern "C" __global__ void f(float* x) {}', "f")
    with knockout.SWITCH.skipped_launches():
        assert kernel((1,), (1,), ()) is None and knockout.SWITCH.skipped == 1  # nothing reached the device


def test_load_inline_returns_a_gated_module_after_install():
    from torch.utils import cpp_extension

    knockout.install()
    assert cpp_extension.load_inline.knockout_gated and cpp_extension.load.knockout_gated


def test_the_knockout_reply_is_typed_and_bounded():
    assert "knockout" in REPLIES
    reply = decode("knockout", {"ok": True, "outputs": [], "skipped": 3, "launches": 7})
    assert (reply.skipped, reply.launches) == (3, 7)
    with pytest.raises(MalformedReply):
        decode("knockout", {"ok": True, "outputs": [], "skipped": -1, "launches": 0})
