"""Package exports that import their module on first use (PEP 562).

A package whose modules serve two kinds of process (the GPU worker, which must stay light, and the
parent) names its exports here instead of importing them all in `__init__`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_getattr(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """The module `__getattr__` that resolves `exports` (name -> defining module) on first access."""

    def __getattr__(name: str) -> object:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    return __getattr__
