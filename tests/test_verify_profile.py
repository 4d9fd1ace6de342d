"""The kernel-coverage arithmetic: our own profiler range is never counted as a kernel."""

from types import SimpleNamespace

from engine.verify.judge.coverage import kernel_launches
from engine.wire.profiling import MARKER, is_kernel_event


def _event(name: str, device: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, device_type=SimpleNamespace(name=device))


def test_the_call_marker_mirrored_on_the_gpu_is_not_a_kernel():
    # What the H200 profiler reported for an honest one-kernel candidate: the range spans the kernel.
    assert is_kernel_event(_event("relu_honest", "CUDA"))
    assert not is_kernel_event(_event(MARKER, "CUDA"))
    assert not is_kernel_event(_event("aten::relu", "CPU"))


def test_shares_split_between_own_and_foreign_kernels():
    launches = kernel_launches({"mine": [1, 3.0], "at::native::elementwise": [2, 1.0]}, ["mine"])
    assert {k.name: k.share for k in launches} == {"mine": 0.75, "at::native::elementwise": 0.25}
    assert [k.own for k in launches] == [True, False]


def test_a_malformed_claimed_profile_is_refused():
    import pytest

    with pytest.raises(ValueError):
        kernel_launches({"mine": [1, -5.0]}, ["mine"])
