"""Coalescing and shared-memory bank estimates for every array access of a kernel, from its source.

For each `a[i]` on global or shared memory the byte addresses of warp 0's lanes are computed
(see `interp`/`evaluator`). Global: the distinct 32-byte sectors the warp touches per request,
which ncu reports as sectors/request (4 is ideal for 4-byte elements, 32 is one sector per lane).
Shared: the wavefronts the access needs (1 = conflict-free; 32 = every lane in one bank).
Accesses inside `__device__` helpers are followed into the helper with the caller's arguments and
reported at the call site, since that is where a kernel's author changes the index.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from engine.analysis.source.cuda_ast import FunctionDef, Macro, Node, call_name, enclosing, line_of, text, walk
from engine.analysis.source.evaluator import Env, Evaluator, Pointer, Undefined, Unknown, Value
from engine.analysis.source.interp import Context, Interpreter
from engine.analysis.source.layouts import Layout

SECTOR_BYTES = 32
BANKS = 32
BANK_BYTES = 4
DEFAULT_SCALAR = 4096  # an unknown size parameter: large, so strides it sets are as large as real ones
BLOCK_INDEX = (1, 1, 0)
LOAD_INTRINSICS = ("__ldg", "__ldcg", "__ldcs", "__ldca", "__ldlu", "__ldcv")
ATOMICS = ("atomicAdd", "atomicSub", "atomicMax", "atomicMin", "atomicExch", "atomicCAS", "atomicAnd",
           "atomicOr", "atomicXor", "atomicInc", "atomicDec", "atomicAdd_block", "atomicAdd_system")
MAX_HELPER_DEPTH = 4  # helpers calling helpers: deeper chains are not followed
PADDINGS = (1, 2, 3, 4)  # row lengths tried around a conflicting tile's declared one


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
    dims: tuple[int | None, ...] = ()  # the array's declared extents (shared and local arrays)
    padded_extent: int | None = None  # shared tile: the row length that serves all its accesses best, if better
    padded_wavefronts: int | None = None  # this access's wavefronts with that row length
    own_pointers: str = ""  # each lane reads through its own pointer, loaded by this expression (`rows[tid]`)
    struct_name: str = ""  # a member of the structs the array holds, of this type ...
    struct_bytes: int = 0  # ... this large

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


def _tile_cost(tile: list[tuple[AccessEstimate, np.ndarray]], declared: int, extent: int) -> tuple[float, list[int]]:
    """Loop-weighted wavefronts of a tile's accesses (element offsets per lane) with rows of `extent`."""
    waves = []
    for access, elements in tile:
        moved = (elements // declared) * extent + elements % declared
        waves.append(shared_wavefronts(moved * access.elem_bytes, access.elem_bytes)[0])
    return sum(access.weight * w for (access, _), w in zip(tile, waves, strict=True)), waves


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


def kernel_environment(kernel: FunctionDef, ev: Evaluator, block: tuple[int, int, int],
                       grid: tuple[int, int, int] | None, scalars: dict[str, int | float],
                       shared: tuple[Node, ...] = (),
                       block_index: tuple[int, int, int] = BLOCK_INDEX) -> tuple[Env, list[str]]:
    """The scope a kernel starts with for `ev.lanes` threads of block `block_index`: built-ins, parameters
    (pointers at offset 0; sizes from `scalars`, else DEFAULT_SCALAR, returned as assumed), template
    arguments, and the file-scope `__shared__` arrays `shared`."""
    env = Env()
    assumed: list[str] = []
    tx, ty, tz = lane_indices(block, ev.lanes)
    env.define("threadIdx", (tx, ty, tz))
    env.define("blockIdx", tuple(ev.const(v) for v in block_index))
    env.define("blockDim", tuple(ev.const(v) for v in block))
    env.define("gridDim", tuple(ev.const(v) for v in (grid or (1024, 64, 1))))
    for param in kernel.params:
        if param.is_pointer:
            levels = max(1, param.depth)
            elem = 8 if levels > 1 else ev.elem_bytes_of(param.type_name)
            env.define(param.name, Pointer(param.name, "global", elem, ev.const(0), (), param.type_name, levels))
        elif (layout := ev.layout_of(param.type_name)) is not None:
            assumed.extend(_struct_argument(param.name, layout, ev, env, scalars))
        elif param.name in scalars:
            env.define(param.name, ev.const(scalars[param.name]))
        elif param.type_name in ("float", "double", "half", "__half"):
            env.define(param.name, Undefined(f"`{param.name}` is a floating-point argument"))
        else:
            env.define(param.name, ev.const(DEFAULT_SCALAR))
            assumed.append(param.name)
    for name in kernel.template_params:
        if name in scalars:
            env.define(name, ev.const(scalars[name]))
    declare = Interpreter(ev, lambda node, scope, ctx: None)
    for declaration in shared:
        declare.declaration(declaration, env, Context())
    return env, assumed


def _struct_argument(name: str, layout: Layout, ev: Evaluator, env: Env,
                     scalars: dict[str, int | float]) -> list[str]:
    """A struct passed by value (`Job job`): its pointer members as arrays (`job.data`) and its integer
    members as sizes (`job.len`: from `scalars`, else DEFAULT_SCALAR, returned as assumed)."""
    assumed = []
    for member in layout.members.values():
        key = f"{name}.{member.name}"
        if member.is_pointer:
            env.define(key, Pointer(key, "global", ev.elem_bytes_of(member.type_name), ev.const(0), (),
                                    member.type_name))
        elif key in scalars:
            env.define(key, ev.const(scalars[key]))
        elif member.count == 1 and member.type_name not in ("float", "double", "half", "__half"):
            env.define(key, ev.const(DEFAULT_SCALAR))
            assumed.append(key)
    return assumed


def bind_arguments(function: FunctionDef, call: Node, ev: Evaluator, env: Env) -> Env:
    """A helper's scope for one call: its parameters bound to the caller's values (pointers stay
    pointers, so an access through one lands on the caller's array)."""
    args_node = call.child_by_field_name("arguments")
    args = [c for c in args_node.children if c.is_named and c.type != "comment"] if args_node else []
    scope = Env(parent=env.root())
    for param, arg in zip(function.params, args, strict=False):
        value: Value | None
        try:
            value = ev.pointer(arg, env)
            if value is None:
                value = ev.value(arg, env)
        except Unknown as exc:
            value = Undefined(str(exc), exc.names)
        scope.define(param.name, value)
    return scope


class AccessCollector:
    """Visits a kernel and records one estimate per global/shared access it can resolve."""

    def __init__(self, kernel: FunctionDef, block: tuple[int, int, int], grid: tuple[int, int, int] | None,
                 scalars: dict[str, int | float], macros: dict[str, Macro], device_functions: dict,
                 default_elem_bytes: int = 4, shared: tuple[Node, ...] = (),
                 layouts: dict[str, Layout] | None = None) -> None:
        self.kernel = kernel
        self.block = block
        self.lanes = max(1, min(32, block[0] * block[1] * block[2]))
        self.ev = Evaluator(self.lanes, macros, device_functions, default_elem_bytes, layouts)
        self.scalars = scalars
        self.grid = grid or (1024, 64, 1)
        self.shared = shared
        self.accesses: list[AccessEstimate] = []
        self.assumed: list[str] = []
        self._seen: set[tuple] = set()
        self._calls: list[Node] = []  # the helper calls being followed, outermost first
        self._tiles: list[tuple[int, np.ndarray]] = []  # (index in accesses, element offsets) of 2-D shared tiles

    def environment(self) -> Env:
        env, self.assumed = kernel_environment(self.kernel, self.ev, self.block, self.grid, self.scalars,
                                               self.shared)
        return env

    def run(self) -> list[AccessEstimate]:
        if self.kernel.body is not None:
            Interpreter(self.ev, self.visit, decide=self.decide).run(self.kernel.body, self.environment())
            self.suggest_padding()
        return self.accesses

    def suggest_padding(self) -> None:
        """For each shared tile with a bank conflict, the row length (declared ± a few elements) that
        gives the fewest wavefronts over all its accesses, loop-weighted; a tie keeps rows 16-byte
        aligned (128-bit shared loads) and changes the declaration least. Recorded only if it helps."""
        by_array: dict[str, list[tuple[int, np.ndarray]]] = {}
        for index, elements in self._tiles:
            by_array.setdefault(self.accesses[index].array, []).append((index, elements))
        for entries in by_array.values():
            first = self.accesses[entries[0][0]]
            if max(self.accesses[i].excess for i, _ in entries) < 2 or first.dims[-1] is None:
                continue
            declared = first.dims[-1]
            widest = max(int(e.max() % declared) for _, e in entries)
            candidates = [declared + p for p in PADDINGS] + [declared - p for p in PADDINGS if declared - p > widest]
            tile = [(self.accesses[i], e) for i, e in entries]
            current = _tile_cost(tile, declared, declared)[0]
            best = min(candidates, key=lambda c: (_tile_cost(tile, declared, c)[0], (c * first.elem_bytes) % 16 != 0,
                                                  abs(c - declared)))
            total, waves = _tile_cost(tile, declared, best)
            if total < current:
                for (index, _), wavefronts in zip(entries, waves, strict=True):
                    self.accesses[index] = replace(self.accesses[index], padded_extent=best,
                                                   padded_wavefronts=wavefronts)

    def helper(self, call: Node, env: Env, ctx: Context) -> None:
        """Follow a `__device__` helper's body with this call's arguments: its accesses are the caller's."""
        function = self.ev.device_functions.get(call_name(call))
        if function is None or function.body is None or len(self._calls) >= MAX_HELPER_DEPTH \
                or any(call_name(c) == function.name for c in self._calls):
            return
        scope = bind_arguments(function, call, self.ev, env)
        self._calls.append(call)
        try:
            Interpreter(self.ev, self.visit).run(function.body, scope, ctx)
        finally:
            self._calls.pop()

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
            if current.type == "field_expression" and self.member(current, env, ctx):
                argument = current.child_by_field_name("argument")
                while argument.type == "subscript_expression":  # `out[i].h0`: the member is the access
                    indices = argument.child_by_field_name("indices")
                    if indices is not None:
                        stack.extend(indices.children)
                    argument = argument.child_by_field_name("argument")
                continue
            if current.type == "pointer_expression" and text(current.child_by_field_name("operator")) == "*":
                self.dereference(current, env, ctx)
            elif current.type == "call_expression":
                self.pointer_call(current, env, ctx)
                if call_name(current) in self.ev.device_functions:
                    self.helper(current, env, ctx)
            stack.extend(reversed(current.children))

    def member(self, node: Node, env: Env, ctx: Context) -> bool:
        """`out[i].h0` or `p->h0`: record the access of one member of a struct in memory (its own offset and
        width). False when the field expression is not such an access (a dim3 field, `job.data`, an array
        member that a subscript indexes further)."""
        parent = node.parent
        if parent is not None and parent.type == "subscript_expression" and parent.child_by_field_name("argument") \
                == node:
            return False
        try:
            env.lookup("".join(text(node).split()))
            return False  # a member of a struct argument: a value, not memory
        except KeyError:
            pass
        try:
            target = self.ev.member(node, env)
        except Unknown as exc:
            return self._unknown_member(node, env, ctx, str(exc))
        if target is None or target.space not in ("global", "shared") or target.root == text(node):
            return False
        kind = _kind(node)
        if kind is not None:
            self.record(node, target, kind, ctx, target.offset, "")
        return True

    def _unknown_member(self, node: Node, env: Env, ctx: Context, reason: str) -> bool:
        argument = node.child_by_field_name("argument")
        while argument.type == "subscript_expression":
            argument = argument.child_by_field_name("argument")
        try:
            base = self.ev.pointer(argument, env)
        except Unknown:
            base = None
        if base is None or base.space not in ("global", "shared") or self.ev.layout_of(base.type_name) is None:
            return False
        self.record(node, base, _kind(node) or "load", ctx, None, reason)
        return True

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
        key = (tuple(c.start_byte for c in self._calls), node.start_byte, node.end_byte)
        if key in self._seen:
            return
        self._seen.add(key)
        # a whole struct copied (`t = tracks[i]`) counts as one access of its size: the warp reads one contiguous
        # span and uses all of it, whatever pieces the compiler copies it in; a member alone is the struct apart
        width = array.elem_bytes
        layout = self.ev.layouts.get(array.struct) if array.struct else None
        line, expression = line_of(node), text(node)
        if self._calls:  # an access inside a helper: reported where the kernel calls it
            line, expression = line_of(self._calls[0]), f"{text(self._calls[0])} → {expression}"
        common = dict(kernel=self.kernel.name, line=line, expression=expression[:120], array=array.root,
                      space=array.space, kind=kind, elem_bytes=width, loop_depth=ctx.loop_depth, dims=array.dims,
                      struct_name=layout.name if layout else "", struct_bytes=layout.size if layout else 0)
        if array.lane_bases and offsets is not None and ctx.loop_depth > 0 and np.all(offsets == offsets[0]):
            # lanes in step, each at the same place of its own block of memory: a walk per thread, every
            # lane in its own sector (their blocks are at least the walk apart, unless they overlap)
            per_lane = max(1, -(-width // SECTOR_BYTES))
            self.accesses.append(AccessEstimate(**common, sectors=len(offsets) * per_lane,
                                                ideal_sectors=max(1, -(-len(offsets) * width // SECTOR_BYTES)),
                                                own_pointers=array.lane_bases))
            return
        if array.lane_bases:
            offsets, reason = None, reason or f"each lane's base address is loaded from memory ({array.lane_bases})"
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
            if len(array.dims) >= 2 and not self._calls and np.all(addresses % width == 0):
                self._tiles.append((len(self.accesses), addresses // width))
            self.accesses.append(AccessEstimate(**common, wavefronts=wavefronts, ideal_wavefronts=ideal,
                                                lane_stride_bytes=stride))


def estimate_accesses(kernel: FunctionDef, block: tuple[int, int, int], grid: tuple[int, int, int] | None = None,
                      scalars: dict[str, int | float] | None = None, macros: dict[str, Macro] | None = None,
                      device_functions: dict | None = None, default_elem_bytes: int = 4,
                      shared: tuple[Node, ...] = (),
                      layouts: dict[str, Layout] | None = None) -> tuple[list[AccessEstimate], list[str]]:
    """Estimates for every access of `kernel` launched with `block`, and the scalars that were assumed;
    `shared`: the unit's file-scope `__shared__` declarations; `layouts`: its structs (see `layouts`)."""
    collector = AccessCollector(kernel, block, grid, scalars or {}, macros or {}, device_functions or {},
                                default_elem_bytes, shared, layouts)
    return collector.run(), collector.assumed
