"""The kernel-coverage arithmetic: our own profiler range is never counted as a kernel."""

from engine.verify.profile import MARKER, CallProfile, kernel_launches


def test_the_call_marker_mirrored_on_the_gpu_is_not_a_kernel():
    # What the H200 profiler reported for an honest one-kernel candidate: the range spans the kernel.
    profile = CallProfile(kernels={"relu_honest": (1, 1.2), MARKER: (1, 1.2)})
    launches = kernel_launches(profile, ["relu_honest"])
    assert [k.name for k in launches] == ["relu_honest"]
    assert launches[0].own and launches[0].share == 1.0


def test_shares_split_between_own_and_foreign_kernels():
    profile = CallProfile(kernels={"mine": (1, 3.0), "at::native::elementwise": (2, 1.0), MARKER: (1, 4.0)})
    shares = {k.name: k.share for k in kernel_launches(profile, ["mine"])}
    assert shares == {"mine": 0.75, "at::native::elementwise": 0.25}
