"""Which torch ops and GPU kernels one call ran: the "real work" checks.

The reference's heavy ops (everything it calls but allocation, views and copies-for-layout) may not
appear in the candidate's call unless the problem allows them; on a GPU the candidate's own
kernels must have run and carry a substantial share of its GPU time (a decoy kernel that is
compiled but never launched, or a trivial sub-op, is not a kernel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch.autograd.profiler import profile, record_function

from engine.verify.records import PROFILER_MARKER, KernelLaunch, shared_out

MIN_OWN_SHARE = 0.30
MARKER = PROFILER_MARKER

# Ops that allocate, reshape or view: never "the computation", so never blocked, and what runs
# inside them (a clone under .contiguous()) is not counted as the candidate's own call.
_TRIVIAL_NAMES = (
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros", "zeros_like", "ones",
    "ones_like", "full", "full_like", "new_zeros", "new_ones", "new_full", "view", "view_as", "reshape",
    "_reshape_alias", "_unsafe_view", "contiguous", "as_strided", "expand", "expand_as", "unsqueeze", "squeeze",
    "flatten", "unflatten", "permute", "transpose", "t", "select", "slice", "narrow", "split", "chunk", "unbind",
    "detach", "detach_", "alias", "lift_fresh", "to", "_to_copy", "resize_", "size", "stride", "numel", "dim",
    "is_contiguous", "item", "_local_scalar_dense", "set_", "zero_", "fill_", "result_type", "lift",
    "lift_fresh_copy", "resolve_conj", "resolve_neg", "_has_compatible_shallow_copy_type", "record_stream",
    "is_nonzero",
)
TRIVIAL_OPS = frozenset(f"aten::{n}" for n in _TRIVIAL_NAMES)


@dataclass
class CallProfile:
    ops: set[str] = field(default_factory=set)  # ops not inside a trivial op (what the code itself called)
    top_ops: set[str] = field(default_factory=set)  # ops called directly by the profiled function
    all_ops: set[str] = field(default_factory=set)
    kernels: dict[str, tuple[int, float]] = field(default_factory=dict)  # name → (calls, total µs)


def _under_trivial(event) -> bool:
    parent = event.cpu_parent
    while parent is not None and parent.name != MARKER:
        if parent.name in TRIVIAL_OPS:
            return True
        parent = parent.cpu_parent
    return False


def is_gpu_event(event) -> bool:
    device_type = getattr(event, "device_type", None)
    return device_type is not None and device_type.name == "CUDA"


def is_kernel_event(event) -> bool:
    """A GPU event that is a kernel. Kineto mirrors our own `MARKER` range on the GPU too: it spans the
    call's kernels and is none of them (counted, it halved every honest candidate's own share)."""
    return is_gpu_event(event) and event.name != MARKER


def profile_call(fn: Callable[[], object], cuda: bool) -> CallProfile:
    # The autograd profiler, not torch.profiler: the latter imports torch._inductor on start (seconds).
    with profile(use_device="cuda" if cuda else None, use_kineto=cuda) as prof:
        with record_function(MARKER):
            fn()
        if cuda:
            torch.cuda.synchronize()
    result = CallProfile()
    for event in prof.function_events:
        if cuda and is_gpu_event(event):
            if not is_kernel_event(event):
                continue
            calls, total = result.kernels.get(event.name, (0, 0.0))
            span = getattr(event, "time_range", None)  # not device_time_total: that is 0 for "async" events
            duration = float(span.elapsed_us()) if span is not None else float(event.device_time_total or 0.0)
            result.kernels[event.name] = (calls + 1, total + duration)
            continue
        if not event.name.startswith("aten::"):
            continue
        result.all_ops.add(event.name)
        if event.name not in TRIVIAL_OPS and not _under_trivial(event):
            result.ops.add(event.name)
        if event.cpu_parent is not None and event.cpu_parent.name == MARKER:
            result.top_ops.add(event.name)
    return result


def heavy_ops(reference: CallProfile, allowed: list[str]) -> set[str]:
    """The reference's computation ops the candidate may not call: those its forward calls itself.

    Not what runs inside them (mean's inner sum): a candidate may well finish with a small torch
    reduction of its own. A different op doing the reference's work is left to the GPU's
    kernel-coverage check, which needs no list of names.
    """
    return {op for op in reference.top_ops if op not in TRIVIAL_OPS and op not in set(allowed)}


def is_own(kernel_name: str, own_names: list[str]) -> bool:
    return any(name and name in kernel_name for name in own_names)


def kernel_launches(prof: CallProfile, own_names: list[str]) -> list[KernelLaunch]:
    return shared_out([(name, calls, t, is_own(name, own_names)) for name, (calls, t) in prof.kernels.items()])
