"""Calls a compiled C entry point through ctypes on host arrays (references and CPU candidates)."""

from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from engine.verify.wire.c_inputs import ArgSpec

CTYPES_SCALARS = {"int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double}


def load_entry(library: Path | str, entry: str, specs: list[ArgSpec]):
    """The entry function with its argument types declared, so ctypes converts scalars correctly."""
    function = getattr(ctypes.CDLL(str(library)), entry)
    function.restype = None
    function.argtypes = [ctypes.c_void_p if s.is_array else CTYPES_SCALARS[s.base_type] for s in specs]
    return function


def call_host(function, specs: list[ArgSpec], values: dict) -> None:
    """Run the entry on `values` in place (arrays must be C-contiguous numpy arrays)."""
    args = []
    for spec in specs:
        value = values[spec.name]
        if spec.is_array:
            assert isinstance(value, np.ndarray) and value.flags.c_contiguous
            args.append(value.ctypes.data)
        else:
            args.append(value)
    function(*args)
