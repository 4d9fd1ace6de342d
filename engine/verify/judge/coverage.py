"""Is the candidate doing the work itself? The profile's part of the answer (the judge's own test is
`TorchJudge.dependence`: what the answer depends on).

On a GPU the profile (the runner's report: evidence) tells which of the reference's own ops the candidate
called and how much GPU time kernels not its own ran: calling every one of them, with those kernels doing most
of the reference's GPU work, is the reference replayed (a copy kernel the answer passes through changes nothing).
Leaving part of the computation to the library (a GEMM, a convolution) is legitimate. The GPU-time share of its
own kernels decides only where the judge could not test what the answer depends on. Where no GPU time exists to
share out (a CPU machine), the names decide instead: the candidate may not call the ops the reference's forward
calls itself, unless the problem allows them.
"""

from __future__ import annotations

from engine.schema.verdict import KernelLaunch, shared_out
from engine.wire.profiling import TRIVIAL_OPS

MIN_OWN_SHARE = 0.30  # only where dependence could not be tested (no own launch went through the wrappers)
MAX_REFERENCE_WORK = 0.5  # of the reference's own GPU time, done by foreign kernels while calling its ops


def heavy_ops(reference_top_ops: set[str], allowed: list[str]) -> set[str]:
    """The reference's computation ops: those its forward calls itself (not what runs inside them,
    mean's inner sum say), minus allocation, views and what the problem allows."""
    return {op for op in reference_top_ops if op not in TRIVIAL_OPS and op not in set(allowed)}


def is_own(kernel_name: str, own_names: list[str]) -> bool:
    return any(name and name in kernel_name for name in own_names)


def kernel_launches(kernels: dict[str, list], own_names: list[str]) -> list[KernelLaunch]:
    """The runner's {name: [calls, total µs]} as launches with their share of GPU time."""
    rows = []
    for name, value in kernels.items():
        calls, total = int(value[0]), float(value[1])
        if calls < 0 or total < 0:
            raise ValueError("negative kernel count or time in the profile")
        rows.append((str(name), calls, total, is_own(str(name), own_names)))
    return shared_out(rows)
