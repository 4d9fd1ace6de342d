"""The two problem helpers the worker shares with the library, loaded by file path.

`engine.problems`'s package import pulls in the loader and the settings (pydantic, simpleeval);
the worker may import only torch, cupy, numpy and the standard library, so it loads
`reference_module.py` and `c_inputs.py` (both written for workers) without their package.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

PROBLEMS_DIR = Path(__file__).resolve().parents[1] / "problems"


@functools.cache
def _load(stem: str):
    name = f"_refinery_problem_{stem}"
    spec = importlib.util.spec_from_file_location(name, PROBLEMS_DIR / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


def load_reference_module(source: str, params: dict, filename: str = "reference.py"):
    """`engine.problems.reference_module.load_module`: the KernelBench file with one config's sizes."""
    return _load("reference_module").load_module(source, params, filename=filename)


def c_inputs():
    """`engine.problems.c_inputs` (ArgSpec, make_inputs, NUMPY_TYPES)."""
    return _load("c_inputs")
