"""What a CUDA file's host code says before anything runs: the values its functions pass to one
another, and the bytes it moves between host and device.

A standalone program computes its sizes in `main` and hands them to a launch helper
(`launch(d_x, n)`), so a helper's parameters take the values its callers pass (the first value
known wins; chains such as main → run → launch are followed a few calls deep). The same walk reads
`cudaMemcpy` and `cudaMalloc` sizes: the data the kernels must at least read (host to device) and
write (device to host), the minimum DRAM traffic of a file that has no analytical model.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine.analysis.source.cuda_ast import FunctionDef, Macro, Node, call_name, constants, macros, text, walk
from engine.analysis.source.evaluator import Env, Evaluator, Pointer, Undefined, Unknown
from engine.analysis.source.interp import Context, Interpreter

CALL_DEPTH = 3  # caller chains this deep (main → run → launch) pass their values on
Scalar = int | float


def unit_macros(root: Node, fixed: dict[str, Scalar] | None = None) -> dict[str, Macro]:
    """The names a translation unit defines before any function runs: file-scope constants and
    #defines, with the values a caller fixes (`--size N=…`) over both."""
    found = {**constants(root), **macros(root)}
    for name, value in (fixed or {}).items():
        found[name] = Macro(name, None, repr(value))
    return found


def host_env(function: FunctionDef, ev: Evaluator, host_scalars: dict[str, Scalar],
             pinned: dict[str, Scalar], passed: dict[str, dict[str, Scalar]]) -> Env:
    """The scope a host function starts with: the pinned sizes, then its parameters' values.

    A parameter takes the value its callers pass, else a host value of its name; a pointer is a
    fresh cudaMalloc buffer (256-byte aligned, so 0 as an address: alignment tests such as
    `((uintptr_t)A % 16 == 0)` hold as they do at run time). Any other parameter is unknown by its
    own name, so the report can ask for it; `main`'s (argc, argv) are not sizes and stay undeclared.
    """
    env = Env()
    for name, value in pinned.items():
        env.define(name, ev.const(value))
    bound = passed.get(function.name, {})
    for param in function.params:
        if param.name in pinned:
            continue
        if param.is_pointer:
            env.define(param.name, ev.const(0))
        elif param.name in bound or param.name in host_scalars:
            env.define(param.name, ev.const(bound.get(param.name, host_scalars.get(param.name))))
        elif function.name != "main":
            env.define(param.name, Undefined(f"`{param.name}` is a parameter of {function.name}, known only "
                                             "when it is called", (param.name,)))
    return env


def scalar(ev: Evaluator, node: Node, env: Env) -> Scalar:
    """The one value an expression has in host code; raises Unknown (with the names it needs)."""
    value = ev.value(node, env)
    if isinstance(value, Undefined):
        raise Unknown(value.reason, value.names)
    if not isinstance(value, np.ndarray) or isinstance(value, Pointer):
        raise Unknown(f"`{text(node)}` is not a number")
    return value[0].item()


def arguments(call: Node) -> list[Node]:
    args = call.child_by_field_name("arguments")
    return [c for c in args.children if c.is_named and c.type != "comment"] if args is not None else []


def walk_host(host_functions: Iterable[FunctionDef], macros: dict[str, Macro], host_scalars: dict[str, Scalar],
              pinned: dict[str, Scalar], passed: dict[str, dict[str, Scalar]], visit) -> None:
    """Run `visit(call, scope, ev)` on every call expression of every host function, in its scope."""
    for function in host_functions:
        if function.body is None:
            continue
        ev = Evaluator(1, macros)

        def visitor(node: Node, scope: Env, ctx: Context, ev=ev) -> None:
            for call in walk(node):
                if call.type == "call_expression":
                    visit(call, scope, ev)

        env = host_env(function, ev, host_scalars, pinned, passed)
        Interpreter(ev, visitor, pinned={k: ev.const(v) for k, v in pinned.items()}).run(function.body, env)


def passed_values(host_functions: list[FunctionDef], macros: dict[str, Macro], host_scalars: dict[str, Scalar],
                  pinned: dict[str, Scalar] | None = None) -> dict[str, dict[str, Scalar]]:
    """Host function name → {parameter: the value a caller passes}, for the parameters that are numbers."""
    pinned = pinned or {}
    by_name = {f.name: f for f in host_functions if f.body is not None}
    callers = [f for f in by_name.values() if any(_calls(f, name) for name in by_name if name != f.name)]
    passed: dict[str, dict[str, Scalar]] = {}
    for _ in range(CALL_DEPTH):
        found: dict[str, dict[str, Scalar]] = {}

        def visit(call: Node, scope: Env, ev: Evaluator, found=found) -> None:
            callee = by_name.get(call_name(call))
            if callee is None:
                return
            for param, arg in zip(callee.params, arguments(call), strict=False):
                if param.is_pointer or param.name in found.get(callee.name, {}):
                    continue
                try:
                    found.setdefault(callee.name, {})[param.name] = scalar(ev, arg, scope)
                except Unknown:
                    continue

        walk_host(callers, macros, host_scalars, pinned, passed, visit)
        if found == passed:
            break
        passed = found
    return passed


def _calls(function: FunctionDef, name: str) -> bool:
    return f"{name}(" in text(function.body).replace(" (", "(")


@dataclass(frozen=True)
class Transfers:
    """Bytes the host code moves to and from the device, and what it allocates there."""

    to_device: int = 0
    to_host: int = 0
    allocated: int = 0
    copies: int = 0  # cudaMemcpy calls whose size was known
    unknown: tuple[str, ...] = ()  # names an unknown copy or allocation size needs

    @property
    def min_bytes(self) -> int | None:
        """What the kernels must at least read and write: the copies both ways, else the allocations."""
        return (self.to_device + self.to_host) or self.allocated or None

    @property
    def origin(self) -> str:
        if self.to_device + self.to_host:
            return "cudaMemcpy sizes (host to device + device to host)"
        return "cudaMalloc sizes" if self.allocated else ""


_COPIES = ("cudaMemcpy", "cudaMemcpyAsync")
_ALLOCATIONS = ("cudaMalloc", "cudaMallocManaged", "cudaMallocAsync")


def transfers(host_functions: list[FunctionDef], macros: dict[str, Macro], host_scalars: dict[str, Scalar],
              pinned: dict[str, Scalar] | None = None) -> Transfers:
    """The sizes of every cudaMemcpy (by direction) and cudaMalloc in the host code, evaluated in place."""
    pinned = pinned or {}
    passed = passed_values(host_functions, macros, host_scalars, pinned)
    totals = {"to_device": 0, "to_host": 0, "allocated": 0, "copies": 0}
    unknown: dict[str, None] = {}

    def visit(call: Node, scope: Env, ev: Evaluator) -> None:
        name, args = call_name(call), arguments(call)
        if name in _COPIES and len(args) >= 4:
            kind = text(args[3])
            key = "to_device" if "HostToDevice" in kind else "to_host" if "DeviceToHost" in kind else None
            size = args[2]
        elif name in _ALLOCATIONS and len(args) >= 2:
            key, size = "allocated", args[1]
        else:
            return
        if key is None:
            return
        try:
            totals[key] += int(scalar(ev, size, scope))
            totals["copies"] += key != "allocated"
        except Unknown as exc:
            unknown.update(dict.fromkeys(exc.names))

    walk_host([f for f in host_functions if f.body is not None], macros, host_scalars, pinned, passed, visit)
    return Transfers(**totals, unknown=tuple(unknown))
