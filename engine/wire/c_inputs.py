"""Inputs for a C problem's entry point at one configuration, from its [[args]] rules and inputs.py.

Numpy only: both sides of the trust boundary make the same inputs from the same seed with it.
Every array gets values from a seeded generator, never zeros, so an output that was never written
or a kernel that ignores an input shows up.
"""

from __future__ import annotations

import re
import runpy
from dataclasses import dataclass
from pathlib import Path

import numpy as np

NUMPY_TYPES = {"int": np.int32, "long": np.int64, "float": np.float32, "double": np.float64}
_RULE = re.compile(r"^\s*(uniform|normal|randint)\s*\(\s*([-+0-9.eE]+)\s*,\s*([-+0-9.eE]+)\s*\)\s*$")


@dataclass(frozen=True)
class ArgSpec:
    """An argument with its sizes evaluated for one configuration: plain data a worker can take."""

    name: str
    base_type: str
    is_array: bool
    intent: str
    size: int = 0
    value: float | int | None = None
    init: str | None = None


def _fill(spec: ArgSpec, rng: np.random.Generator) -> np.ndarray:
    dtype = NUMPY_TYPES[spec.base_type]
    rule = spec.init or ("randint(0, 100)" if spec.base_type in ("int", "long") else "uniform(-1, 1)")
    match = _RULE.match(rule)
    if not match:
        raise ValueError(f"argument {spec.name}: unknown init rule {rule!r}")
    kind, a, b = match.group(1), float(match.group(2)), float(match.group(3))
    if kind == "uniform":
        return rng.uniform(a, b, spec.size).astype(dtype)
    if kind == "normal":
        return rng.normal(a, b, spec.size).astype(dtype)
    return rng.integers(int(a), int(b), spec.size).astype(dtype)


def make_inputs(specs: list[ArgSpec], params: dict, seed: int, inputs_path: Path | str | None = None) -> dict:
    """Arrays (numpy) and scalars by argument name; inputs.py's make_inputs overrides what it returns."""
    return made_inputs(specs, params, seed, inputs_path)[0]


def made_inputs(specs: list[ArgSpec], params: dict, seed: int,
                inputs_path: Path | str | None = None) -> tuple[dict, frozenset[str]]:
    """(`make_inputs`'s values, the names of the arrays filled by an [[args]] rule: independent draws of
    one distribution, so any rotation of one is another draw of it; inputs.py's arrays may have structure)."""
    rng = np.random.default_rng(seed)
    custom: dict = {}
    if inputs_path is not None:
        custom = runpy.run_path(str(inputs_path))["make_inputs"](dict(params), rng)
    values: dict = {}
    drawn = set()
    for spec in specs:
        if not spec.is_array:
            values[spec.name] = spec.value
            continue
        dtype = NUMPY_TYPES[spec.base_type]
        if spec.name in custom:
            array = np.ascontiguousarray(custom[spec.name], dtype=dtype)
        else:
            array = _fill(spec, rng)
            drawn.add(spec.name)
        if array.size != spec.size:
            raise ValueError(f"argument {spec.name}: {array.size} elements, the problem says {spec.size}")
        values[spec.name] = array
    return values, frozenset(drawn)
