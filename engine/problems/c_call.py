"""Calls a compiled C entry point (loaded with `engine.wire.c_entry.load_entry`) on host arrays."""

from __future__ import annotations

import numpy as np

from engine.wire.c_inputs import ArgSpec


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
