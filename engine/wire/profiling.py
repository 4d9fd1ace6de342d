"""Which torch ops and GPU kernels one call ran: the runner reports the candidate's to the judge, and the
judge profiles the reference with the same code.

The judge decides from this report (judge.coverage): the candidate's own kernels must carry a
substantial share of its GPU time. The report comes from inside the candidate's process, so it is
evidence the judge weighs beside its own clock, not a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import torch
from torch.autograd.profiler import profile, record_function

MARKER = "refinery::call"  # the range opened around the call; kineto mirrors it on the GPU, where it is no kernel

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

    def to_json(self) -> dict:
        data = asdict(self)
        for name in ("ops", "top_ops", "all_ops"):
            data[name] = sorted(data[name])
        return data


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
