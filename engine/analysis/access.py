"""Coalescing and shared-memory bank estimates for every array access of a kernel, from its source.

For each `a[i]` on global or shared memory the byte addresses of warp 0's lanes are computed
(see `interp`/`evaluator`). Global: the distinct 32-byte sectors the warp touches per request,
which ncu reports as sectors/request (4 is ideal for 4-byte elements, 32 is one sector per lane).
Shared: the wavefronts the access needs (1 = conflict-free; 32 = every lane in one bank).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.analysis.cuda_ast import FunctionDef, Macro, Node, call_name, enclosing, line_of, text, walk
from engine.analysis.evaluator import Env, Evaluator, Pointer, Undefined, Unknown
from engine.analysis.interp import Context, Interpreter

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
DEFAULT_SCALAR = 4096  # an unknown size parameter: large, so strides it sets are as large as real ones
BLOCK_INDEX = (1, 1, 0)
LOAD_INTRINSICS = ("__ldg", "__ldcg", "__ldcs", "__ldca", "__ldlu", "__ldcv")
ATOMICS = ("atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicExch", "atomicCAS", "atomicAnd",
           "atomicOr", "atomicXor", "atomicInc", "atomicDec", "atomicAdd_block", "atomicAdd_system")


@dataclass(frozen=True)
class AccessEstimate:
    """One array access in the source and what warp 0 does with it."""

    kernel: str
    line: int
    expression: str
    array: str
    space: str  # global | shared
    kind: str  # load | store | atomic
    elem_bytes: int
    loop_depth: int
    sectors: int | None = None  # global: distinct 32-byte sectors per warp request
    ideal_sectors: int | None = None  # what a contiguous access of this width needs
    lane_stride_bytes: int | None = None  # address(lane 1) - address(lane 0)
    wavefronts: int | None = None  # shared: wavefronts per request
    ideal_wavefronts: int | None = None
    reason: str = ""  # why nothing could be estimated

    @property
    def known(self) -> bool:
        return self.sectors is not None or self.wavefronts is not None

    @property
    def excess(self) -> float:
        """Sectors (or wavefronts) per request over the ideal: 1.0 is perfect."""
        if self.sectors is not None and self.ideal_sectors:
            return self.sectors / self.ideal_sectors
        if self.wavefronts is not None and self.ideal_wavefronts:
            return self.wavefronts / self.ideal_wavefronts
        return 1.0

    @property
    def weight(self) -> float:
        """How much this access counts in a kernel's average: inner-loop accesses run most often."""
        return float(8 ** self.loop_depth)


def global_sectors(addresses: np.ndarray, width: int) -> tuple[int, int]:
    """(sectors touched, ideal sectors) for one warp-wide access of `width` bytes per lane."""
    first = addresses // SECTOR_BYTES
    last = (addresses + width - 1) // SECTOR_BYTES
    sectors = set(first.tolist()) | set(last.tolist())
    ideal = max(1, -(-len(np.unique(addresses)) * width // SECTOR_BYTES))
    return len(sectors), ideal


def shared_wavefronts(addresses: np.ndarray, width: int) -> tuple[int, int]:
    """(wavefronts, ideal) for a shared-memory access: 64/128-bit accesses are split into 2/4 phases."""
    phases = max(1, width // BANK_BYTES) if width > BANK_BYTES else 1
    phases = min(phases, 4)
    lanes_per_phase = max(1, len(addresses) // phases)
    total = 0
    for start in range(0, len(addresses), lanes_per_phase):
        words: dict[int, set[int]] = {}
        for address in addresses[start:start + lanes_per_phase].tolist():
            for word in range(address // BANK_BYTES, (address + width - 1) // BANK_BYTES + 1):
                words.setdefault(word % BANKS, set()).add(word)
        total += max((len(w) for w in words.values()), default=1)
    ideal = -(-len(addresses) // lanes_per_phase)
    return total, ideal


def lane_indices(block: tuple[int, int, int], lanes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """threadIdx.{x,y,z} of the first `lanes` threads of a block (x varies fastest)."""
    linear = np.arange(lanes, dtype=np.int64)
    bx, by = max(block[0], 1), max(block[1], 1)
    return linear % bx, (linear // bx) % by, linear // (bx * by)


def _kind(node: Node) -> str | None:
    """load/store/atomic for an access node, or None when only its address is taken."""
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        node, parent = parent, parent.parent
    if parent is None:
        return "load"
    if parent.type == "assignment_expression" and parent.child_by_field_name("left") == node:
        return "store"
    if parent.type == "update_expression":
        return "store"
    if parent.type == "pointer_expression" and text(parent.child_by_field_name("operator")) == "&":
        call = enclosing(parent, ("call_expression",))
        name = call_name(call) if call is not None else ""
        if name.startswith(LOAD_INTRINSICS):
            return "load"
        if name in ATOMICS or name.startswith("atomic"):
            return "atomic"
        return None
    return "load"


class AccessCollector:
    """Visits a kernel and records one estimate per global/shared access it can resolve."""

    def __init__(self, kernel: FunctionDef, block: tuple[int, int, int], grid: tuple[int, int, int] | None,
                 scalars: dict[str, int | float], macros: dict[str, Macro], device_functions: dict,
                 default_elem_bytes: int = 4) -> None:
        self.kernel = kernel
        self.block = block
        self.lanes = max(1, min(32, block[0] * block[1] * block[2]))
        self.ev = Evaluator(self.lanes, macros, device_functions, default_elem_bytes)
        self.scalars = scalars
        self.grid = grid or (1024, 64, 1)
        self.accesses: list[AccessEstimate] = []
        self.assumed: list[str] = []
        self._seen: set[tuple[int, int]] = set()

    def environment(self) -> Env:
        env = Env()
        ev = self.ev
        tx, ty, tz = lane_indices(self.block, self.lanes)
        env.define("threadIdx", (tx, ty, tz))
        env.define("blockIdx", tuple(ev.const(v) for v in BLOCK_INDEX))
        env.define("blockDim", tuple(ev.const(v) for v in self.block))
        env.define("gridDim", tuple(ev.const(v) for v in self.grid))
        for param in self.kernel.params:
            if param.is_pointer:
                env.define(param.name, Pointer(param.name, "global", ev.elem_bytes_of(param.type_name),
                                               ev.const(0), (), param.type_name))
            elif param.name in self.scalars:
                env.define(param.name, ev.const(self.scalars[param.name]))
            elif param.type_name in ("float", "double", "half", "__half"):
                env.define(param.name, Undefined(f"`{param.name}` is a floating-point argument"))
            else:
                env.define(param.name, ev.const(DEFAULT_SCALAR))
                self.assumed.append(param.name)
        for name in self.kernel.template_params:
            if name in self.scalars:
                env.define(name, ev.const(self.scalars[name]))
        return env

    def run(self) -> list[AccessEstimate]:
        if self.kernel.body is not None:
            Interpreter(self.ev, self.visit, decide=self.decide).run(self.kernel.body, self.environment())
        return self.accesses

    def decide(self, condition: Node, env: Env) -> int | None:
        """The arm every thread takes when the condition reads only scalar arguments the launch gave
        (a path flag such as `if (vec)` set from alignment and row length); otherwise both arms are
        modelled. Assumed sizes never prune: their value is a placeholder, not the launch's."""
        known = {p.name for p in self.kernel.params if not p.is_pointer and p.name in self.scalars}
        names = {text(n) for n in walk(condition) if n.type == "identifier"}
        if not names or not names <= known:
            return None
        expression = next((c for c in condition.children if c.is_named), condition)
        try:
            values = self.ev.vector(expression, env)
        except (Unknown, TypeError, ValueError, ZeroDivisionError):
            return None
        if not isinstance(values, np.ndarray) or values.size == 0 or not np.all(values == values.flat[0]):
            return None
        return 0 if values.flat[0] else 1

    # the visitor: every expression the interpreter reaches, with its scope
    def visit(self, node: Node, env: Env, ctx: Context) -> None:
        stack = [node]
        while stack:
            current = stack.pop()
            if current.type == "subscript_expression":
                self.subscript(current, env, ctx)
                outer = current
                while outer.type == "subscript_expression":  # indices may hold accesses of their own
                    indices = outer.child_by_field_name("indices")
                    if indices is not None:
                        stack.extend(indices.children)
                    outer = outer.child_by_field_name("argument")
                stack.append(outer)
                continue
            if current.type == "pointer_expression" and text(current.child_by_field_name("operator")) == "*":
                self.dereference(current, env, ctx)
            elif current.type == "call_expression":
                self.pointer_call(current, env, ctx)
            stack.extend(reversed(current.children))

    def pointer_call(self, node: Node, env: Env, ctx: Context) -> None:
        """`__ldg(p + i)` and `atomicAdd(p + i, v)`: accesses through a pointer argument, not a subscript."""
        name = call_name(node)
        if name.startswith(LOAD_INTRINSICS):
            kind = "load"
        elif name in ATOMICS or name.startswith("atomic"):
            kind = "atomic"
        else:
            return
        args = node.child_by_field_name("arguments")
        first = next((c for c in args.children if c.is_named), None) if args is not None else None
        if first is None or (first.type == "pointer_expression" and first.child_by_field_name("argument").type
                             == "subscript_expression"):
            return  # `&a[i]`: recorded by the subscript itself
        try:
            target = self.ev.pointer(first, env)
        except Unknown as exc:
            return self._unknown_pointer(node, first, env, kind, ctx, str(exc))
        if target is not None and target.space in ("global", "shared") and not target.dims:
            self.record(node, target, kind, ctx, target.offset, "")

    def _unknown_pointer(self, node: Node, first: Node, env: Env, kind: str, ctx: Context, reason: str) -> None:
        root = first
        while root.type in ("binary_expression", "parenthesized_expression", "cast_expression"):
            named = [c for c in root.children if c.is_named]
            root = root.child_by_field_name("left") or root.child_by_field_name("value") or named[0]
        try:
            base = self.ev.pointer(root, env)
        except Unknown:
            base = None
        if base is not None and base.space in ("global", "shared"):
            self.record(node, base, kind, ctx, None, reason)

    def subscript(self, node: Node, env: Env, ctx: Context) -> None:
        root = node
        while root.child_by_field_name("argument") is not None and \
                root.child_by_field_name("argument").type == "subscript_expression":
            root = root.child_by_field_name("argument")
        base = root.child_by_field_name("argument")
        try:
            array = self.ev.pointer(base, env) if base is not None else None
        except Unknown:
            array = None
        if array is None or array.space not in ("global", "shared"):
            return
        kind = _kind(node)
        if kind is None:
            return
        if array.dims and self._depth(node) != len(array.dims):
            return
        try:
            element = self.ev.element(node, env)
        except Unknown as exc:
            self.record(node, array, kind, ctx, None, str(exc))
            return
        if element is not None:
            self.record(node, array, kind, ctx, element.offset, "")

    def dereference(self, node: Node, env: Env, ctx: Context) -> None:
        argument = node.child_by_field_name("argument")
        try:
            target = self.ev.pointer(argument, env)
        except Unknown as exc:
            target = None
            reason = str(exc)
        else:
            reason = ""
        if target is None or target.space not in ("global", "shared") or target.dims:
            if reason and target is not None:
                self.record(node, target, _kind(node) or "load", ctx, None, reason)
            return
        kind = _kind(node)
        if kind is not None:
            self.record(node, target, kind, ctx, target.offset, "")

    @staticmethod
    def _depth(node: Node) -> int:
        depth = 0
        while node is not None and node.type == "subscript_expression":
            depth += 1
            node = node.child_by_field_name("argument")
        return depth

    def record(self, node: Node, array: Pointer, kind: str, ctx: Context, offsets: np.ndarray | None,
               reason: str) -> None:
        key = (node.start_byte, node.end_byte)
        if key in self._seen:
            return
        self._seen.add(key)
        width = array.elem_bytes
        common = dict(kernel=self.kernel.name, line=line_of(node), expression=text(node)[:120], array=array.root,
                      space=array.space, kind=kind, elem_bytes=width, loop_depth=ctx.loop_depth)
        if offsets is None:
            self.accesses.append(AccessEstimate(**common, reason=reason or "address not known statically"))
            return
        addresses = offsets.astype(np.int64)
        stride = int(addresses[1] - addresses[0]) if len(addresses) > 1 else None
        if array.space == "global":
            sectors, ideal = global_sectors(addresses, width)
            self.accesses.append(AccessEstimate(**common, sectors=sectors, ideal_sectors=ideal,
                                                lane_stride_bytes=stride))
        else:
            wavefronts, ideal = shared_wavefronts(addresses, width)
            self.accesses.append(AccessEstimate(**common, wavefronts=wavefronts, ideal_wavefronts=ideal,
                                                lane_stride_bytes=stride))


def estimate_accesses(kernel: FunctionDef, block: tuple[int, int, int], grid: tuple[int, int, int] | None = None,
                      scalars: dict[str, int | float] | None = None, macros: dict[str, Macro] | None = None,
                      device_functions: dict | None = None,
                      default_elem_bytes: int = 4) -> tuple[list[AccessEstimate], list[str]]:
    """Estimates for every access of `kernel` launched with `block`, and the scalars that were assumed."""
    collector = AccessCollector(kernel, block, grid, scalars or {}, macros or {}, device_functions or {},
                                default_elem_bytes)
    return collector.run(), collector.assumed
