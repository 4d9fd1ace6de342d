"""The kernel-coverage arithmetic: our own profiler range is never counted as a kernel."""

from types import SimpleNamespace

from engine.verify.profile import MARKER, CallProfile, is_kernel_event, kernel_launches


def _event(name: str, device: str) -> SimpleNamespace:
    return SimpleNamespace(name=name, device_type=SimpleNamespace(name=device))


def test_the_call_marker_mirrored_on_the_gpu_is_not_a_kernel():
    # What the H200 profiler reported for an honest one-kernel candidate: the range spans the kernel.
    assert is_kernel_event(_event("relu_honest", "CUDA"))
    assert not is_kernel_event(_event(MARKER, "CUDA"))
    assert not is_kernel_event(_event("aten::relu", "CPU"))


def test_shares_split_between_own_and_foreign_kernels():
    profile = CallProfile(kernels={"mine": (1, 3.0), "at::native::elementwise": (2, 1.0)})
    launches = kernel_launches(profile, ["mine"])
    assert {k.name: k.share for k in launches} == {"mine": 0.75, "at::native::elementwise": 0.25}
    assert [k.own for k in launches] == [True, False]
