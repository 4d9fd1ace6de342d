"""Snapshots of process state a candidate must leave alone: timer and torch functions, precision flags,
threads. Taken before candidate code runs, compared after each step, restored when changed.

The harness also binds the functions it times and compares with at import (see `timing`), so a
patch cannot change a measurement; this module is what reports that one was attempted.
"""

from __future__ import annotations

import builtins
import inspect
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

_TORCH_DIR = str(Path(torch.__file__).resolve().parent)

_WATCHED: list[tuple[object, str]] = [
    (time, "perf_counter"), (time, "perf_counter_ns"), (time, "time"), (time, "monotonic"), (time, "process_time"),
    (torch, "allclose"), (torch, "isclose"), (torch, "equal"), (torch, "manual_seed"), (torch, "randn"),
    (torch, "rand"), (torch, "empty"), (torch, "empty_like"), (torch, "compile"),
    (torch.Tensor, "__eq__"), (torch.Tensor, "clone"), (torch.Tensor, "copy_"), (torch.Tensor, "double"),
    (torch.Tensor, "to"), (torch.Tensor, "cpu"), (torch.Tensor, "data_ptr"), (torch.Tensor, "__torch_function__"),
    (torch.nn.Module, "__call__"), (torch.nn.Module, "to"), (torch.nn.Module, "_call_impl"),
    (torch.cuda, "synchronize"), (torch.cuda, "Event"), (torch.cuda, "current_stream"), (torch.cuda, "Stream"),
    (torch.cuda.Event, "record"), (torch.cuda.Event, "elapsed_time"), (torch.cuda.Event, "synchronize"),
    (torch.autograd.profiler, "profile"), (torch.profiler, "profile"), (builtins, "open"),
    (builtins, "__import__"), (builtins, "print"),
]


def _torch_wrapper(current: object, original: object) -> bool:
    """torch wraps some of its own functions on lazy imports (dynamo wraps torch.manual_seed): not a patch."""
    code = getattr(current, "__code__", None)
    try:
        unwrapped = inspect.unwrap(current)
    except ValueError:
        return False
    return unwrapped is original and code is not None and code.co_filename.startswith(_TORCH_DIR)


def _flags() -> dict[str, object]:
    return {
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "default_dtype": torch.get_default_dtype(),
        "grad_enabled": torch.is_grad_enabled(),
    }


def _set_flags(flags: dict[str, object]) -> None:
    torch.backends.cuda.matmul.allow_tf32 = flags["torch.backends.cuda.matmul.allow_tf32"]
    torch.backends.cudnn.allow_tf32 = flags["torch.backends.cudnn.allow_tf32"]
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = flags[
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction"]
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = flags[
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction"]
    torch.set_float32_matmul_precision(flags["float32_matmul_precision"])
    torch.set_default_dtype(flags["default_dtype"])
    torch.set_grad_enabled(flags["grad_enabled"])


@dataclass
class ProcessGuard:
    """The worker's pristine state; `check()` reports and undoes what changed since `__post_init__`."""

    functions: dict[tuple[int, str], object] = field(default_factory=dict)
    flags: dict[str, object] = field(default_factory=dict)
    threads: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.functions = {(id(owner), name): owner.__dict__.get(name, getattr(owner, name, None))
                          for owner, name in _WATCHED}
        self.flags = _flags()
        self.threads = {t.ident for t in threading.enumerate()}

    def accept_current_threads(self) -> None:
        """After the harness itself starts threads (torch.compile's compile workers), they are not the candidate's."""
        self.threads |= {t.ident for t in threading.enumerate()}

    def check(self) -> tuple[list[str], list[str], list[str]]:
        """(patched functions, changed precision flags, new threads), each restored or reported."""
        patched = []
        for owner, name in _WATCHED:
            original = self.functions[(id(owner), name)]
            current = owner.__dict__.get(name, getattr(owner, name, None))
            if current is not original and not _torch_wrapper(current, original):
                label = getattr(owner, "__name__", type(owner).__name__)
                patched.append(f"{label}.{name}")
                setattr(owner, name, original)
        flags = _flags()
        changed = [f"{k}: {self.flags[k]} → {v}" for k, v in flags.items() if v != self.flags[k]]
        if changed:
            _set_flags(self.flags)
        threads = [t.name for t in threading.enumerate() if t.ident not in self.threads and t.is_alive()]
        return patched, changed, threads
