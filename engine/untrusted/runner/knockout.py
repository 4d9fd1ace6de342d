"""The candidate's own kernels, skipped on the judge's request: the test of what its answer depends on.

A candidate may leave a GEMM or a convolution to the vendor library and fuse the rest into kernels of its own;
what it may not do is compute the answer with the reference's ops beside kernels that decorate. A share of GPU
time cannot tell the two apart (an epilogue is a small share of an honest level-2 kernel's time), what the
answer depends on can: with the candidate's own launches skipped, an honest candidate's answer is wrong (or it
fails), a decorated one's is still right. The judge sends the request, chooses the inputs and compares the
outputs with its own answer; this process only skips the launches.

Own launches are those that go through the ways a candidate compiles code of its own: CuPy's RawKernel,
RawModule, ElementwiseKernel and ReductionKernel, Triton's JIT functions, and the functions of a load_inline
extension. They are wrapped before any candidate code runs, so the wrappers are part of the process the
guards snapshot, and `Switch.launches` counts what went through them.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from typing import Any


class Switch:
    """Whether own launches run, and how many went through the wrappers."""

    def __init__(self) -> None:
        self.skipping = False
        self.launches = 0  # own launches that ran
        self.skipped = 0  # own launches skipped while `skipping`

    def gate(self) -> bool:
        """Count one launch; whether it may run."""
        if self.skipping:
            self.skipped += 1
            return False
        self.launches += 1
        return True

    @contextlib.contextmanager
    def skipped_launches(self) -> Iterator[None]:
        self.skipping, self.skipped = True, 0
        try:
            yield
        finally:
            self.skipping = False


SWITCH = Switch()


def gated(call: Callable[..., Any]) -> Callable[..., Any]:
    """`call`, or nothing while the switch skips own launches."""
    @functools.wraps(call)
    def launch(*args, **kwargs):
        if not SWITCH.gate():
            return None
        return call(*args, **kwargs)
    return launch


class GatedFunction:
    """A compiled function object (CuPy's RawModule.get_function) whose calls go through the switch."""

    def __init__(self, function: Any) -> None:
        self._function = function
        self._call = gated(function)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._function, name)


class GatedModule:
    """A load_inline extension whose functions go through the switch (its other attributes as they are)."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        return gated(value) if callable(value) and not isinstance(value, type) else value


def _gate_cupy() -> None:
    cupy = sys.modules.get("cupy")
    if cupy is None:
        return
    for name in ("RawKernel", "ElementwiseKernel", "ReductionKernel"):
        original = getattr(cupy, name, None)
        if original is None or getattr(original, "knockout_gated", False):
            continue
        try:
            gated_class = type(name, (original,), {"__call__": gated(original.__call__), "knockout_gated": True,
                                                   "__module__": __name__})
        except TypeError:  # a class that cannot be subclassed: its launches are not seen (the judge then
            continue       # finds none skipped and decides from the profile, as without this test)
        setattr(cupy, name, gated_class)
    module = getattr(cupy, "RawModule", None)
    if module is not None and not getattr(module, "knockout_gated", False):
        def get_function(self, name, _get=module.get_function):
            return GatedFunction(_get(self, name))
        cupy.RawModule = type("RawModule", (module,), {"get_function": get_function, "knockout_gated": True,
                                                       "__module__": __name__})


def _gate_triton() -> None:
    try:
        from triton.runtime.jit import JITFunction
    except Exception:  # noqa: BLE001 - no Triton here (a CPU build of torch): nothing of it to gate
        return
    if not getattr(JITFunction.run, "knockout_gated", False):
        JITFunction.run = gated(JITFunction.run)
        JITFunction.run.knockout_gated = True  # type: ignore[attr-defined]


def _gate_load_inline() -> None:
    from torch.utils import cpp_extension

    for name in ("load_inline", "load"):
        original = getattr(cpp_extension, name)
        if getattr(original, "knockout_gated", False):
            continue

        @functools.wraps(original)
        def build(*args, _original=original, **kwargs):
            module = _original(*args, **kwargs)
            return GatedModule(module) if module is not None else module
        build.knockout_gated = True  # type: ignore[attr-defined]
        setattr(cpp_extension, name, build)


def install() -> None:
    """Wrap every way of launching own code that is loaded in this process (call after importing them)."""
    _gate_cupy()
    _gate_triton()
    _gate_load_inline()
