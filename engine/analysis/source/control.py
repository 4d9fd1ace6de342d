"""Control flow per warp: branches that split a warp's lanes, loops whose trip count differs from
thread to thread, and loops whose trip count is fixed when the kernel is compiled.

The model is the access estimates' (`interp`: the first trip through each loop, both arms of each
branch), run over every thread of one block instead of one warp, so a condition becomes one truth
value per thread and can be cut into warps: `threadIdx.x % 2` splits every warp, `threadIdx.x / 32`
and a bounds check in an interior block split none. A trip count read from memory at an address
that differs per lane (`row_ptr[r + 1]` with one row per thread) has no value before the kernel
runs, but how many lanes of a warp read their own bound does. With SASS line info, each branch and
loop is weighed in instructions, and a source loop is matched to the backward branch that repeats it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.analysis.binary.sass import InstructionMix
from engine.analysis.source.access import LOAD_INTRINSICS, kernel_environment
from engine.analysis.source.cuda_ast import FunctionDef, Macro, Node, call_name, line_of, parse_expression, text, walk
from engine.analysis.source.evaluator import Env, Evaluator, Pointer, Unknown
from engine.analysis.source.interp import LOOPS, Context, Interpreter

MAX_THREADS = 1024
# Blocks a branch must split to count: the access model's interior block, and one off the diagonal
# of a 2-D grid (a triangular guard such as `col >= row` splits only the blocks on the diagonal)
BLOCK_SAMPLES = ((1, 1, 0), (2, 1, 0))
MAX_GEOMETRIC_TRIPS = 64  # `s *= 2` / `s >>= 1` loops are stepped, not solved
_BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
_COMPILE_TIME_NAMES = frozenset({"warpSize", "true", "false"})
_STATEMENTS = ("expression_statement", "declaration", "return_statement")
_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "!=": "!="}
# warp votes and uniform shuffles: their value is the same in every lane of a warp, whatever the lanes loaded
WARP_UNIFORM = ("__all_sync", "__any_sync", "__all", "__any", "__uni_sync", "__reduce_add_sync", "__reduce_min_sync",
                "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync")


@dataclass(frozen=True)
class BranchEstimate:
    """An `if` whose condition splits the lanes of some warps of the block."""

    kernel: str
    line: int
    condition: str
    lanes: int  # lanes per warp (32, fewer for a block smaller than a warp)
    warps: int  # warps in the block
    divergent_warps: int  # warps whose lanes disagree on the condition
    active_lanes: float  # mean lanes that take the `if` arm, over the divergent warps
    has_else: bool
    in_loop: bool
    then_cost: int  # instructions (or statements, see `unit`) of the `if` arm
    else_cost: int
    region_cost: int  # of the enclosing loop's body, or of the kernel
    unit: str  # "SASS instructions" | "statements"
    # a condition on a value each lane loads from its own address (`bits[i] < 32`): which lanes take which arm
    # is known only when the kernel runs, so `divergent_warps` and `active_lanes` are what a mixed warp does
    data_source: str = ""
    data_groups: int = 0  # distinct addresses the lanes of one warp load it from
    # `if (blockIdx.x >= count[0]) return;` at the top level: whole blocks exit at once, on a count read from
    # memory that is the same for every thread (the grid is sized to a maximum, not to the work)
    block_exit: bool = False

    @property
    def idle_share(self) -> float:
        """Share of lane slots idle while a divergent warp runs the arms (both arms run, one after the other)."""
        arms = self.then_cost + self.else_cost
        if not arms or not self.lanes:
            return 0.0
        idle = self.then_cost * (self.lanes - self.active_lanes) + self.else_cost * self.active_lanes
        return idle / (self.lanes * arms)

    @property
    def arm_share(self) -> float:
        return min(1.0, (self.then_cost + self.else_cost) / self.region_cost) if self.region_cost else 0.0

    @property
    def waste(self) -> float:
        """Lane slots lost to the split, as a share of the region's work over the whole block."""
        return self.idle_share * self.arm_share * (self.divergent_warps / self.warps if self.warps else 0.0)


@dataclass(frozen=True)
class LoopEstimate:
    """One loop of a kernel: how its trip count varies over the block's threads, and what fixes it."""

    kernel: str
    line: int
    header: str  # `for (int k = 0; k < TILE; k++)`, shortened
    loop_depth: int  # loops around it
    trips: tuple[int, float, int] | None = None  # (min, mean, max) over the block's threads, when known
    bound: str = ""  # the expression the loop variable is compared with
    data_groups: int = 0  # distinct per-lane loads feeding the bounds within one warp (lanes = one work item each)
    lanes: int = 32
    data_source: str = ""  # the load that feeds the bound, e.g. `row_ptr[r + 1]`
    constant_trips: int | None = None  # trip count fixed at compile time (literals, #defines, template arguments)
    unroll_pragma: str | None = None  # the argument of a `#pragma unroll` right before it ("" for a bare one)
    rolled: bool | None = None  # SASS still repeats it with a backward branch (None: no line info)
    sass_instructions: int | None = None  # instructions of that SASS loop
    body_cost: int = 0  # instructions (or statements) on the loop's lines
    launch_trips: int | None = None  # the same trip count for every thread of the grid, fixed by the launch
    launch_names: tuple[str, ...] = ()  # what the launch fixes it by: `blockDim.x`, launch-time parameters

    @property
    def imbalance(self) -> float:
        """1 - mean/max trip count over the block: the share of lane iterations spent waiting."""
        if self.trips is None or self.trips[2] <= 0:
            return 0.0
        return 1.0 - self.trips[1] / self.trips[2]


def _same(a: Node | None, b: Node | None) -> bool:
    return a is not None and b is not None and (a.start_byte, a.end_byte, a.type) == (b.start_byte, b.end_byte, b.type)


def _inner(node: Node) -> Node:
    """The expression inside `( ... )` or a condition clause."""
    while node.type in ("condition_clause", "parenthesized_expression"):
        named = [c for c in node.children if c.is_named and c.type != "comment"]
        if not named:
            break
        node = named[-1]
    return node


def _lines(node: Node) -> tuple[int, int]:
    return node.start_point[0] + 1, node.end_point[0] + 1


def _per_warp(values: np.ndarray, lanes: int) -> np.ndarray:
    """Values as rows of one warp each (the last warp padded with its own last lane)."""
    pad = (-len(values)) % lanes
    if pad:
        values = np.concatenate([values, np.repeat(values[-1:], pad)])
    return values.reshape(-1, lanes)


def _groups(values: np.ndarray, lanes: int) -> int:
    """Most distinct values any one warp holds."""
    return max(len(np.unique(row)) for row in _per_warp(values, lanes))


class ControlCollector:
    """Walks one kernel over all threads of a block, recording divergent branches and loops."""

    def __init__(self, kernel: FunctionDef, block: tuple[int, int, int], grid: tuple[int, int, int] | None,
                 scalars: dict[str, int | float], macros: dict[str, Macro], device_functions: dict,
                 default_elem_bytes: int = 4, shared: tuple[Node, ...] = (), mix: InstructionMix | None = None):
        self.kernel = kernel
        self.block, self.grid, self.scalars, self.shared = block, grid, scalars, shared
        self.threads = max(1, min(MAX_THREADS, block[0] * block[1] * block[2]))
        self.lanes = min(32, self.threads)
        self.ev = Evaluator(self.threads, macros, device_functions, default_elem_bytes)
        self.macros = macros
        self.mix = mix if mix is not None and mix.has_lines else None
        self.loads: dict[str, int] = {}  # local name -> data groups of the loads its value came from
        self.sources: dict[str, str] = {}  # local name -> the load expression that fed it
        self.definitions: dict[str, Node] = {}  # local name -> the expression it was declared with
        self.constants: set[str] = set(kernel.template_params)
        self.branches: list[BranchEstimate] = []
        self.loops: list[LoopEstimate] = []
        self._seen: set[int] = set()

    def run(self) -> tuple[list[BranchEstimate], list[LoopEstimate]]:
        """Branches that split warps in every sampled block (the weakest split kept); loops of the first."""
        if self.kernel.body is None:
            return [], []
        splits: list[dict[tuple[int, str], BranchEstimate]] = []
        loops: list[LoopEstimate] = []
        for index, block_index in enumerate(BLOCK_SAMPLES):
            self.loads, self.sources, self.branches, self.loops, self._seen = {}, {}, [], [], set()
            self.constants = set(self.kernel.template_params)
            env, _ = kernel_environment(self.kernel, self.ev, self.block, self.grid, self.scalars, self.shared,
                                        block_index)
            Interpreter(self.ev, self.visit).run(self.kernel.body, env)
            splits.append({(b.line, b.condition): b for b in self.branches})
            if index == 0:
                loops = self.loops
        common = [min((run[key] for run in splits), key=lambda b: b.waste)
                  for key in splits[0] if all(key in run for run in splits[1:])]
        return common, loops

    # -- the visitor -----------------------------------------------------------------------------
    def visit(self, node: Node, env: Env, ctx: Context) -> None:
        parent = node.parent
        if parent is None:
            return
        if parent.type == "init_declarator" and _same(node, parent.child_by_field_name("value")):
            self._define(parent, node, env)
        elif node.type == "assignment_expression":
            self._assign(node, env)
        if parent.type == "if_statement" and _same(node, parent.child_by_field_name("condition")):
            self._branch(parent, node, env, ctx)
        elif parent.type in LOOPS and _same(node, parent.child_by_field_name("condition")):
            self._loop(parent, node, env, ctx)

    def _define(self, declarator: Node, value: Node, env: Env) -> None:
        name = text(declarator.child_by_field_name("declarator")).lstrip("*& ")
        self.loads[name], self.sources[name] = self.data(value, env)
        self.definitions[name] = value
        declaration = declarator.parent
        qualifiers = {text(c) for c in declaration.children if c.type in ("type_qualifier", "storage_class_specifier")}
        if qualifiers & {"const", "constexpr"} and self.compile_time(value, env):
            self.constants.add(name)
        else:
            self.constants.discard(name)

    def _assign(self, node: Node, env: Env) -> None:
        left = node.child_by_field_name("left")
        if left is None or left.type != "identifier":
            return
        name = text(left)
        groups, source = self.data(node.child_by_field_name("right"), env)
        if text(node.child_by_field_name("operator")) != "=" and self.loads.get(name, 0) >= groups:
            return
        self.loads[name], self.sources[name] = groups, source
        self.constants.discard(name)

    # -- data that comes from memory -------------------------------------------------------------
    def data(self, node: Node | None, env: Env) -> tuple[int, str]:
        """(most distinct load addresses in one warp among the loads feeding `node`, the widest load)."""
        if node is None:
            return 0, ""
        kind = node.type
        if kind == "identifier":
            name = text(node)
            return self.loads.get(name, 0), self.sources.get(name, "")
        if kind == "subscript_expression":
            try:
                element = self.ev.element(node, env)
            except Unknown:
                element = None
            if element is not None and element.space in ("global", "shared"):
                return _groups(element.offset, self.lanes), text(node)
        elif kind == "pointer_expression" and text(node.child_by_field_name("operator")) == "*":
            target = self._pointer(node.child_by_field_name("argument"), env)
            if target is not None:
                return _groups(target.offset, self.lanes), text(node)
        elif kind == "call_expression" and call_name(node) in WARP_UNIFORM:
            return 0, ""  # a vote over the warp: one value for all its lanes
        elif kind == "call_expression" and call_name(node).startswith(LOAD_INTRINSICS):
            args = node.child_by_field_name("arguments")
            first = next((c for c in args.children if c.is_named), None) if args is not None else None
            target = self._pointer(first, env) if first is not None else None
            if target is not None:
                return _groups(target.offset, self.lanes), text(node)
        best = (0, "")
        for child in node.children:
            if child.is_named:
                found = self.data(child, env)
                if found[0] > best[0]:
                    best = found
        return best

    def _pointer(self, node: Node | None, env: Env) -> Pointer | None:
        try:
            target = self.ev.pointer(node, env) if node is not None else None
        except Unknown:
            return None
        return target if target is not None and target.space in ("global", "shared") else None

    # -- compile-time constants ------------------------------------------------------------------
    def compile_time(self, node: Node | None, env: Env, depth: int = 0) -> bool:
        """Whether `node`'s value is fixed when the kernel is compiled: literals, #defines, file-scope and
        local constants, template arguments; not sizes passed at launch, nor thread or block indices."""
        if node is None or depth > 8:
            return False
        for current in walk(node):
            if current.type == "field_expression" and text(current.child_by_field_name("argument")) in _BUILTINS:
                return False
            if current.type == "qualified_identifier":
                if not self._constant_name(text(current).replace(" ", ""), env, depth):
                    return False
            elif current.type == "identifier" and (current.parent is None
                                                   or current.parent.type != "qualified_identifier"):
                parent = current.parent
                if parent is not None and parent.type == "call_expression" and \
                        _same(current, parent.child_by_field_name("function")):
                    continue  # min(...), max(...): the arguments decide
                if not self._constant_name(text(current), env, depth):
                    return False
        return True

    def _constant_name(self, name: str, env: Env, depth: int) -> bool:
        if name in self.constants or name in _COMPILE_TIME_NAMES:
            return True
        try:
            env.lookup(name)
            return False  # a parameter or a local: known at run time only
        except KeyError:
            pass
        macro = self.macros.get(name) or self.macros.get(name.rsplit("::", 1)[-1])
        if macro is None or macro.params is not None:
            return False
        body = parse_expression(macro.body) if macro.body else None
        return body is not None and self.compile_time(body, Env(), depth + 1)

    # -- branches --------------------------------------------------------------------------------
    def _branch(self, node: Node, condition: Node, env: Env, ctx: Context) -> None:
        if node.start_byte in self._seen:
            return
        self._seen.add(node.start_byte)
        try:
            values = self.ev.vector(_inner(condition), env)
        except (Unknown, TypeError, ValueError, ZeroDivisionError):
            return self._data_branch(node, condition, env, ctx)
        truth = _per_warp(np.asarray(values) != 0, self.lanes)
        active = truth.sum(axis=1)
        split = (active > 0) & (active < self.lanes)
        if not split.any():
            return
        consequence = node.child_by_field_name("consequence")
        alternative = node.child_by_field_name("alternative")
        region = self._region(node)
        self.branches.append(BranchEstimate(
            kernel=self.kernel.name, line=line_of(node), condition=text(_inner(condition))[:80], lanes=self.lanes,
            warps=len(truth), divergent_warps=int(split.sum()), active_lanes=float(active[split].mean()),
            has_else=alternative is not None, in_loop=ctx.loop_depth > 0, then_cost=self._cost(consequence, True),
            else_cost=self._cost(alternative, True), region_cost=self._cost(region),
            unit="SASS instructions" if self.mix is not None else "statements"))

    def _data_branch(self, node: Node, condition: Node, env: Env, ctx: Context) -> None:
        """A branch on data each lane loads from its own address: a warp whose lanes loaded values on both
        sides of the condition runs both arms. Recorded with half the lanes in each arm (a mixed warp)."""
        groups, source = self.data(_inner(condition), env)
        if groups == 1 and self._block_exit(node, condition, env, ctx):
            self.branches.append(BranchEstimate(
                kernel=self.kernel.name, line=line_of(node), condition=text(_inner(condition))[:80],
                lanes=self.lanes, warps=-(-self.threads // self.lanes), divergent_warps=0, active_lanes=0.0,
                has_else=False, in_loop=False, then_cost=0, else_cost=0, region_cost=0, unit="statements",
                data_source=source, data_groups=1, block_exit=True))
            return
        if groups < self.lanes or self.lanes < 2:
            return
        warps = -(-self.threads // self.lanes)
        alternative = node.child_by_field_name("alternative")
        self.branches.append(BranchEstimate(
            kernel=self.kernel.name, line=line_of(node), condition=text(_inner(condition))[:80], lanes=self.lanes,
            warps=warps, divergent_warps=warps, active_lanes=self.lanes / 2, has_else=alternative is not None,
            in_loop=ctx.loop_depth > 0, then_cost=self._cost(node.child_by_field_name("consequence"), True),
            else_cost=self._cost(alternative, True), region_cost=self._cost(self._region(node)),
            unit="SASS instructions" if self.mix is not None else "statements", data_source=source,
            data_groups=groups))

    def _block_exit(self, node: Node, condition: Node, env: Env, ctx: Context) -> bool:
        """`if (blockIdx.x >= count[0]) return;` outside loops: a comparison of a value the same for every thread of
        the block that depends on the block index with a load, whose arm only returns."""
        comparison = _inner(condition)
        consequence = node.child_by_field_name("consequence")
        body = [c for c in consequence.children if c.is_named and c.type != "comment"] \
            if consequence is not None and consequence.type == "compound_statement" else [consequence]
        if ctx.loop_depth or node.child_by_field_name("alternative") is not None or len(body) != 1 \
                or body[0] is None or body[0].type != "return_statement" \
                or comparison.type != "binary_expression" \
                or text(comparison.child_by_field_name("operator")) not in (">=", ">", "<", "<="):
            return False
        for side in ("left", "right"):
            try:
                values = self.ev.vector(comparison.child_by_field_name(side), env)
            except (Unknown, TypeError, ValueError):
                continue
            if np.all(values == values[0]) and self._per_block(comparison.child_by_field_name(side)):
                return True
        return False

    def _per_block(self, node: Node, depth: int = 0) -> bool:
        """Whether a value is computed from `blockIdx` (directly or through the locals it is defined from)."""
        if depth > 8:
            return False
        for current in walk(node):
            if current.type == "field_expression" and text(current.child_by_field_name("argument")) == "blockIdx":
                return True
            if current.type == "identifier" and text(current) in self.definitions and \
                    self._per_block(self.definitions[text(current)], depth + 1):
                return True
        return False

    def _region(self, node: Node) -> Node | None:
        current = node.parent
        while current is not None and not _same(current, self.kernel.body):
            if current.type in LOOPS:
                return current.child_by_field_name("body")
            current = current.parent
        return self.kernel.body

    def _cost(self, node: Node | None, arm: bool = False) -> int:
        """Instructions on the node's lines (statements without line info). An arm that spans lines
        leaves out its first, which it shares with the condition (`if (c) {`) or the other arm (`} else {`)."""
        if node is None:
            return 0
        if self.mix is not None:
            first, last = _lines(node)
            return self.mix.instructions_on(first + 1 if arm and last > first else first, last)
        return sum(1 for n in walk(node) if n.type in _STATEMENTS)

    # -- loops -----------------------------------------------------------------------------------
    def _loop(self, node: Node, condition: Node, env: Env, ctx: Context) -> None:
        if node.start_byte in self._seen:
            return
        self._seen.add(node.start_byte)
        body = node.child_by_field_name("body")
        header_end = body.start_byte if body is not None and node.type != "do_statement" else node.end_byte
        header = " ".join(text(node)[:header_end - node.start_byte].split())
        comparison = _inner(condition)
        groups, source = self.data(comparison, env)
        trips = constant = launch = None
        launch_names: tuple[str, ...] = ()
        bound = ""
        if node.type == "for_statement":
            induction = self._induction(node, comparison, env)
            if induction is not None:
                start, bound_node, op, update = induction
                bound = text(bound_node)
                trips = self._trips(start, bound_node, op, update, env)
                if trips is not None and self._fixed(node, bound_node, update, env):
                    constant = int(trips[0]) if np.all(trips == trips[0]) else None
                elif trips is not None and len(trips) and np.all(trips == trips[0]):
                    names = self._launch_names(node, bound_node, update, env)
                    if names is not None:
                        launch, launch_names = int(trips[0]), names
        summary = (int(trips.min()), float(trips.mean()), int(trips.max())) if trips is not None else None
        rolled, sass = self._rolled(node, condition)
        self.loops.append(LoopEstimate(
            kernel=self.kernel.name, line=line_of(node), header=header[:100], loop_depth=ctx.loop_depth - 1,
            trips=summary, bound=bound[:80], data_groups=groups, lanes=self.lanes, data_source=source[:80],
            constant_trips=constant, unroll_pragma=_unroll_pragma(node), rolled=rolled, sass_instructions=sass,
            body_cost=self._cost(node), launch_trips=launch, launch_names=launch_names))

    def _induction(self, node: Node, comparison: Node, env: Env):
        """(start values, bound node, comparison, update node) of `for (v = a; v < b; v += s)`, or None."""
        if comparison.type != "binary_expression":
            return None
        op = text(comparison.child_by_field_name("operator"))
        left, right = comparison.child_by_field_name("left"), comparison.child_by_field_name("right")
        update = node.child_by_field_name("update")
        if op not in _FLIP or update is None:
            return None
        if left.type == "identifier" and _updates(update, text(left)):
            variable, bound_node = text(left), right
        elif right.type == "identifier" and _updates(update, text(right)):
            variable, bound_node, op = text(right), left, _FLIP[op]
        else:
            return None
        try:
            start = env.lookup(variable)
        except KeyError:
            return None
        if not isinstance(start, np.ndarray):
            return None
        return start, bound_node, op, update

    def _trips(self, start: np.ndarray, bound_node: Node, op: str, update: Node, env: Env) -> np.ndarray | None:
        try:
            bound = self.ev.vector(bound_node, env)
        except (Unknown, TypeError, ValueError, ZeroDivisionError):
            return None
        step = _step(update, self.ev, env)
        if step is None:
            return None
        kind, amount = step
        compare = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal,
                   "!=": np.not_equal}[op]
        if kind == "add" and np.all(amount != 0) and op != "!=":
            gap = (bound - start).astype(np.float64)
            if op in ("<=", ">="):
                gap = gap + np.sign(amount)
            trips = np.ceil(gap / amount)
            return np.maximum(trips, 0).astype(np.int64)
        value, trips = start.astype(np.int64), np.zeros(len(start), dtype=np.int64)
        for _ in range(MAX_GEOMETRIC_TRIPS):
            running = compare(value, bound)
            if not running.any():
                return trips
            trips += running
            value = np.where(running, _apply(kind, value, amount), value)
        return None  # did not finish: no static trip count

    def _fixed(self, node: Node, bound: Node, update: Node, env: Env) -> bool:
        init = node.child_by_field_name("initializer")
        values = [d.child_by_field_name("value") for d in walk(init) if d.type == "init_declarator"] if init else []
        if init is not None and init.type == "assignment_expression":
            values = [init.child_by_field_name("right")]
        if not values:
            return False
        step = update.child_by_field_name("right")
        return all(self.compile_time(v, env) for v in values) and self.compile_time(bound, env) and \
            (step is None or self.compile_time(step, env))

    def _launch_names(self, node: Node, bound: Node, update: Node, env: Env) -> tuple[str, ...] | None:
        """What fixes a loop's trip count at the launch (blockDim/gridDim, parameters the launch site gives), when
        its start, bound and step read nothing else that varies (no thread or block index: not a grid-stride
        loop); None when something else does."""
        init = node.child_by_field_name("initializer")
        parts = [n for n in (init, bound, update.child_by_field_name("right")) if n is not None]
        params = {param.name for param in self.kernel.params}
        names: list[str] = []
        for part in parts:
            for current in walk(part):
                if current.type == "field_expression":
                    base = text(current.child_by_field_name("argument"))
                    if base in ("threadIdx", "blockIdx"):
                        return None
                    if base in ("blockDim", "gridDim"):
                        names.append(text(current))
                elif current.type == "identifier" and current.parent is not None \
                        and current.parent.type != "field_expression":
                    name = text(current)
                    if name in params and name in self.scalars:
                        names.append(name)
                    elif name in params or (not self.compile_time(current, env) and name not in self._loop_vars(node)):
                        return None
        return tuple(dict.fromkeys(names)) or None

    @staticmethod
    def _loop_vars(node: Node) -> set[str]:
        init = node.child_by_field_name("initializer")
        if init is None:
            return set()
        return {text(d.child_by_field_name("declarator")) for d in walk(init) if d.type == "init_declarator"} | \
            ({text(init.child_by_field_name("left"))} if init.type == "assignment_expression" else set())

    def _rolled(self, node: Node, condition: Node) -> tuple[bool | None, int | None]:
        """Whether SASS still has a backward branch repeating this loop: one that branches from inside the
        loop's lines, repeats its header (the counter and the test) and little from outside it (an outer
        loop whose last statement this loop is would also branch from here, but repeats its own lines too)."""
        if self.mix is None:
            return None, None
        body = node.child_by_field_name("body")
        first, last = _lines(node)
        header_end = max(first, line_of(body) - 1) if body is not None and node.type != "do_statement" else first
        header = set(range(first, header_end + 1))
        if node.type == "do_statement":
            header |= set(range(_lines(condition)[0], _lines(condition)[1] + 1))
        matched = [loop for loop in self.mix.sass_loops
                   if loop.branch_line is not None and first <= loop.branch_line <= last and header & set(loop.lines)
                   and sum(first <= line <= last for line in loop.lines) >= 0.75 * len(loop.lines)]
        if not matched:
            return False, None
        return True, min(loop.instructions for loop in matched)


def _updates(update: Node, variable: str) -> bool:
    target = update.child_by_field_name("argument") if update.type == "update_expression" else \
        update.child_by_field_name("left") if update.type == "assignment_expression" else None
    return target is not None and text(target) == variable


def _step(update: Node, ev: Evaluator, env: Env) -> tuple[str, np.ndarray] | None:
    """How the loop variable changes per trip: ("add", s), ("mul", c), ("shr", c), ("shl", c), ("div", c)."""
    if update.type == "update_expression":
        return "add", ev.const(1 if "++" in text(update) else -1)
    operator = text(update.child_by_field_name("operator"))
    right = update.child_by_field_name("right")
    try:
        if operator in ("+=", "-="):
            amount = ev.vector(right, env)
            return "add", amount if operator == "+=" else -amount
        kinds = {"*=": "mul", ">>=": "shr", "<<=": "shl", "/=": "div"}
        if operator in kinds:
            return kinds[operator], ev.vector(right, env)
        if operator == "=" and right.type == "binary_expression":  # v = v + s
            inner_op = text(right.child_by_field_name("operator"))
            other = right.child_by_field_name("right")
            if inner_op in ("+", "-"):
                amount = ev.vector(other, env)
                return "add", amount if inner_op == "+" else -amount
            if inner_op in ("*", ">>", "<<", "/"):
                return {"*": "mul", ">>": "shr", "<<": "shl", "/": "div"}[inner_op], ev.vector(other, env)
    except (Unknown, TypeError, ValueError, ZeroDivisionError):
        return None
    return None


def _apply(kind: str, value: np.ndarray, amount: np.ndarray) -> np.ndarray:
    if kind == "add":
        return value + amount
    if kind == "mul":
        return value * amount
    if kind == "shr":
        return value >> amount
    if kind == "shl":
        return value << amount
    return value // np.where(amount == 0, 1, amount)


def _unroll_pragma(node: Node) -> str | None:
    """The argument of `#pragma unroll [N]` right before a loop ("" for a bare one), else None."""
    previous = node.prev_named_sibling
    while previous is not None and previous.type == "comment":
        previous = previous.prev_named_sibling
    if previous is None or previous.type != "preproc_call" or text(previous.child_by_field_name("directive")) \
            != "#pragma":
        return None
    argument = text(previous.child_by_field_name("argument")).strip()
    if not argument.startswith("unroll"):
        return None
    return argument.removeprefix("unroll").strip().strip("()")


def estimate_control(kernel: FunctionDef, block: tuple[int, int, int], grid: tuple[int, int, int] | None = None,
                     scalars: dict[str, int | float] | None = None, macros: dict[str, Macro] | None = None,
                     device_functions: dict | None = None, default_elem_bytes: int = 4,
                     shared: tuple[Node, ...] = (),
                     mix: InstructionMix | None = None) -> tuple[list[BranchEstimate], list[LoopEstimate]]:
    """Divergent branches and loops of `kernel` launched with `block`; `mix` (with line info) weighs them."""
    collector = ControlCollector(kernel, block, grid, scalars or {}, macros or {}, device_functions or {},
                                 default_elem_bytes, shared, mix)
    return collector.run()
