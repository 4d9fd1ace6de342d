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


def test_a_knockout_call_through_the_real_serve_loop_returns_its_outputs_in_the_region(tmp_path):
    """The serve loop itself, in this process over a socket pair: a reply with tensors must put them in the
    shared region (a tensor left in the JSON ended every GPU runner's job in the coverage stage)."""
    import socket
    import threading

    from engine.untrusted.runner.serve import serve
    from engine.wire.candidate import CandidateSpec, ConfigCall
    from engine.wire.channel import Channel
    from engine.wire.replies import decode
    from engine.wire.shared import SharedRegion, TensorSlot

    reference = ("import torch\nN = 8\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                 "        return torch.relu(x)\ndef get_inputs():\n    return [torch.randn(N)]\n"
                 "def get_init_inputs():\n    return []\n")
    source = ("import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
              "        return x.clamp(min=0)\n")
    spec = CandidateSpec(kind="pytorch", device="cpu", language="python", flavor="torch", source=source,
                         configs=[ConfigCall("small", {"N": 8})], reference_source=reference)
    judge_end, runner_end = socket.socketpair()
    runner = threading.Thread(target=serve, args=(Channel(runner_end), tmp_path, "cpu"), daemon=True)
    runner.start()
    judge = Channel(judge_end)
    region = SharedRegion.create(1 << 16, pin=False)
    try:
        judge.send({"op": "job", "spec": spec.to_json()})
        judge.send({"op": "region", "size": region.size}, fds=(region.fd,))
        assert judge.receive()[0]["ok"]
        for request in ({"op": "load"}, {"op": "construct", "config": "small", "init_seed": 1},
                        {"op": "knockout", "config": "small", "seed": 5}):
            judge.send(request)
            reply, _, _ = judge.receive()
            assert reply["ok"], reply
        knocked = decode("knockout", reply)
        (out,) = [region.take(TensorSlot.from_json(slot.region_json()), "cpu") for slot in knocked.outputs]
        assert out.shape == (8,) and bool((out >= 0).all()) and knocked.skipped == 0
        judge.send({"op": "bye"})
        runner.join(10)
        assert not runner.is_alive()
    finally:
        region.close()
        judge.close()
