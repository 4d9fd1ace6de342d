"""Executes a KernelBench-format file as a module with one configuration's sizes in its globals.

Used by the probe and by the GPU worker, so it imports nothing beyond the standard library.
"""

from __future__ import annotations

import types


def load_module(source: str, params: dict, filename: str = "reference.py", name: str = "reference"):
    """Run `source` as a fresh module, then override its size constants with `params`.

    KernelBench's get_inputs()/get_init_inputs() read the module globals at call time, so
    overriding after execution is what selects the configuration.
    """
    module = types.ModuleType(name)
    module.__file__ = filename
    exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - runs only in probes/workers
    module.__dict__.update(params)
    return module
