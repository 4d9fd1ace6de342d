"""The launch configuration each kernel runs with: block (and, where it can be known, grid) size.

Occupancy and every per-warp estimate depend on the block shape, so it is looked for where a
candidate states it: a `<<<grid, block, smem>>>` site in CUDA host code (also spelled `<< < >> >`;
evaluated with the host function's local values, the values its callers pass, `#define`s and
file-scope constants), a CuPy launch `kernel(grid, block, args)` in Python (with module constants
such as BLOCK_SIZE), or `__launch_bounds__`. Failing all of those, 256 threads are assumed and the
record says so; a launch whose sizes are only known at run time names the variables it needed.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field

import numpy as np

from engine import python_ast
from engine.analysis.source.cuda_ast import FunctionDef, Macro, Node, has_launch, text, walk
from engine.analysis.source.evaluator import Env, Evaluator, Pointer, Undefined, Unknown
from engine.analysis.source.host import host_env, passed_values
from engine.analysis.source.interp import Context, Interpreter
from engine.problems.expressions import BOUNDED, TooLarge

ASSUMED_BLOCK = (256, 1, 1)


@dataclass(frozen=True)
class LaunchSite:
    """One place a kernel is launched, with what could be evaluated there."""

    kernel: str
    block: tuple[int, int, int] | None
    grid: tuple[int, int, int] | None = None
    dynamic_smem: int = 0
    template_args: tuple[str, ...] = ()
    scalar_args: dict[int, int | float] = field(default_factory=dict)  # kernel parameter index -> value
    origin: str = "launch-site"  # launch-site | cupy-launch
    in_loop: bool = False
    line: int = 0
    branch: tuple[tuple[int, int], ...] = ()  # (if-statement id, arm) pairs the site sits under
    unknown: tuple[str, ...] = ()  # names whose values the launch needed and did not find


def exclusive(a: LaunchSite, b: LaunchSite) -> bool:
    """True when the two sites sit in different arms of one if/else: one call runs only one of them."""
    arms = dict(a.branch)
    return any(key in arms and arms[key] != arm for key, arm in b.branch)


def launches_per_call(sites: list[LaunchSite]) -> int:
    """Launch sites one call can run together (the largest set with no two in exclusive branches)."""
    if len(sites) > 12:
        return len(sites)
    best = 0
    for mask in range(1 << len(sites)):
        chosen = [s for i, s in enumerate(sites) if mask >> i & 1]
        if len(chosen) > best and not any(exclusive(x, y) for i, x in enumerate(chosen) for y in chosen[i + 1:]):
            best = len(chosen)
    return best


@dataclass(frozen=True)
class LaunchConfig:
    """The configuration the analysis models a kernel with, and where it came from."""

    kernel: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int] | None = None
    dynamic_smem: int = 0
    origin: str = "assumed"  # launch-site | cupy-launch | launch-bounds | given | assumed
    note: str = ""
    unknown: tuple[str, ...] = ()  # names its launch sites needed and did not find (sizes to give)

    @property
    def threads(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def blocks(self) -> int | None:
        return None if self.grid is None else self.grid[0] * self.grid[1] * self.grid[2]


def _dims(value) -> tuple[int, int, int] | None:
    if isinstance(value, tuple):
        parts = [int(v[0]) for v in value[:3]]
        return tuple(parts + [1] * (3 - len(parts)))  # type: ignore[return-value]
    if isinstance(value, np.ndarray):
        return (int(value[0]), 1, 1)
    return None


# -- CUDA host code -------------------------------------------------------------------------------

def cuda_launch_sites(host_functions: list[FunctionDef], kernels: dict[str, FunctionDef],
                      macros: dict[str, Macro], host_scalars: dict[str, int | float],
                      pinned: dict[str, int | float] | None = None) -> list[LaunchSite]:
    """Every `<<<...>>>` (or `<< <...>> >`) launch in host functions, evaluated with the function's
    local values; a helper's parameters take what its callers pass (`host.passed_values`), and
    `pinned` names (sizes a user gives) keep their values wherever they are declared or assigned."""
    pinned = pinned or {}
    passed = passed_values(host_functions, macros, host_scalars, pinned)
    sites: list[LaunchSite] = []
    for function in host_functions:
        if function.body is None or not has_launch(text(function.body)):
            continue
        ev = Evaluator(1, macros)
        env = host_env(function, ev, host_scalars, pinned, passed)

        def visit(node: Node, scope: Env, ctx: Context, ev=ev) -> None:
            for call in walk(node):
                if call.type == "call_expression" and any(c.type == "kernel_call_syntax" for c in call.children):
                    sites.append(_cuda_site(call, scope, ctx, ev, kernels))

        Interpreter(ev, visit, pinned={k: ev.const(v) for k, v in pinned.items()}).run(function.body, env)
    return sites


def _cuda_site(call: Node, env: Env, ctx: Context, ev: Evaluator, kernels: dict[str, FunctionDef]) -> LaunchSite:
    function = call.child_by_field_name("function")
    template_args: tuple[str, ...] = ()
    if function is not None and function.type == "template_function":
        arguments = function.child_by_field_name("arguments")
        template_args = tuple(text(c) for c in arguments.children if c.is_named) if arguments else ()
        function = function.child_by_field_name("name")
    name = text(function).split("::")[-1]
    syntax = next(c for c in call.children if c.type == "kernel_call_syntax")
    config = [c for c in syntax.children if c.is_named]
    unknown: dict[str, None] = {}

    def dims(node: Node | None) -> tuple[int, int, int] | None:
        if node is None:
            return None
        try:
            value = ev.value(node, env)
        except Unknown as exc:
            unknown.update(dict.fromkeys(exc.names))
            return None
        if isinstance(value, Undefined):
            unknown.update(dict.fromkeys(value.names))
        return _dims(value)

    smem = 0
    if len(config) > 2:
        try:
            smem = int(ev.vector(config[2], env)[0])
        except Unknown as exc:
            unknown.update(dict.fromkeys(exc.names))
            smem = 0
    scalar_args: dict[int, int | float] = {}
    args = call.child_by_field_name("arguments")
    kernel = kernels.get(name)
    for index, arg in enumerate(c for c in (args.children if args else []) if c.is_named):
        if kernel is not None and index < len(kernel.params) and not kernel.params[index].is_pointer:
            try:
                value = ev.value(arg, env)
            except Unknown as exc:
                unknown.update(dict.fromkeys(exc.names))
                continue
            if isinstance(value, Undefined):
                unknown.update(dict.fromkeys(value.names))
            elif isinstance(value, np.ndarray) and not isinstance(value, Pointer):
                scalar_args[index] = value[0].item()
    return LaunchSite(kernel=name, grid=dims(config[0] if config else None),
                      block=dims(config[1] if len(config) > 1 else None), dynamic_smem=smem,
                      template_args=template_args, scalar_args=scalar_args, origin="launch-site",
                      in_loop=ctx.loop_depth > 0, line=call.start_point[0] + 1, branch=_cuda_branch(call),
                      unknown=tuple(unknown))


def _cuda_branch(node: Node) -> tuple[tuple[int, int], ...]:
    arms = []
    child, parent = node, node.parent
    while parent is not None:
        if parent.type == "if_statement":
            arm = 0 if parent.child_by_field_name("consequence") == child else 1
            if parent.child_by_field_name("condition") != child:
                arms.append((parent.start_byte, arm))
        child, parent = parent, parent.parent
    return tuple(arms)


# -- Python (CuPy) launches -----------------------------------------------------------------------

_DTYPE_BYTES = {"float16": 2, "half": 2, "bfloat16": 2, "float32": 4, "float": 4, "float64": 8, "double": 8,
                "int8": 1, "uint8": 1, "bool": 1, "int16": 2, "int32": 4, "int": 4, "int64": 8, "long": 8}
_FACTORIES = ("randn", "rand", "empty", "zeros", "ones", "full", "randint")
_SAME_TENSOR = ("contiguous", "float", "half", "cuda", "clone", "detach", "to", "abs", "exp", "relu")
_LIKE = ("empty_like", "zeros_like", "ones_like", "randn_like", "rand_like", "full_like")


@dataclass(frozen=True)
class TensorShape:
    """A tensor as the launch arithmetic sees it: its shape and element size, no data.

    Its data pointer is taken as that of a fresh allocation, which PyTorch's caching allocator
    aligns to 512 bytes, so alignment tests (`x.data_ptr() % 16 == 0`) hold, as they do for the
    inputs a run passes.
    """

    shape: tuple[int, ...]
    elem_bytes: int = 4

    def method(self, name: str, args: list):
        if name == "size":
            return self.shape[args[0]] if args else self.shape
        if name == "numel":
            return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1
        if name == "dim":
            return len(self.shape)
        if name == "data_ptr":
            return 0
        if name == "element_size":
            return self.elem_bytes
        if name == "stride":
            strides = tuple(int(np.prod(self.shape[i + 1:], dtype=np.int64)) for i in range(len(self.shape)))
            return strides[args[0]] if args else strides
        if name in _SAME_TENSOR:
            return self
        raise Unknown(f"tensor method `{name}` not modelled")


def _dtype_bytes(keywords: list[ast.keyword]) -> int:
    for keyword in keywords:
        if keyword.arg == "dtype":
            return _DTYPE_BYTES.get(ast.unparse(keyword.value).split(".")[-1], 4)
    return 4


class TooLargeToEvaluate(Unknown):
    """A value whose arithmetic is past the bounds (`engine.problems.expressions.BOUNDED`): left unknown."""


class _PyEval:
    """Integer arithmetic over a Python module's constants and a function's simple local assignments,
    with tensors known by their shapes (`TensorShape`): enough for the sizes and flags a launch
    computes from its inputs (`rows, cols = x.shape`, `vec = int(cols % 4 == 0)`).

    The source is a candidate's: `**`, `*` and `<<` are bounded (`9**9**9` is refused before it runs, as
    TooLargeToEvaluate), so no constant can stall the trusted process that analyses it."""

    def __init__(self, names: dict[str, object]) -> None:
        self.names = names

    def eval(self, node: ast.AST):
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return node.value
        if isinstance(node, ast.Compare):
            return self._compare(node)
        if isinstance(node, ast.BoolOp):
            value = None
            for operand in node.values:  # Python's own short circuit: `and` stops at a falsy value
                value = self.eval(operand)
                if bool(value) != isinstance(node.op, ast.And):
                    return value
            return value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.eval(node.operand)
        if isinstance(node, ast.IfExp):
            return self.eval(node.body) if self.eval(node.test) else self.eval(node.orelse)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Attribute):
            if ast.unparse(node) in self.names:  # `self.k`, set in __init__
                return self.names[ast.unparse(node)]
            base = self.eval(node.value)
            if isinstance(base, TensorShape) and node.attr in ("shape", "ndim"):
                return base.shape if node.attr == "shape" else len(base.shape)
            raise Unknown(f"`{ast.unparse(node)}` is only known at run time")
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            raise Unknown(f"`{node.id}` is only known at run time")
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self.eval(e) for e in node.elts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.eval(node.operand)
        if isinstance(node, ast.BinOp):
            left, right = self.eval(node.left), self.eval(node.right)
            ops = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.FloorDiv: lambda a, b: a // b,
                   ast.Div: lambda a, b: a / b, ast.Mod: lambda a, b: a % b, ast.RShift: lambda a, b: a >> b,
                   **BOUNDED}
            op = ops.get(type(node.op))
            if op is None or isinstance(left, tuple) or isinstance(right, tuple):
                raise Unknown("expression not modelled")
            try:
                return op(left, right)
            except TooLarge as exc:
                raise TooLargeToEvaluate(str(exc)) from None
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if tensor := self._tensor_call(node, func):
                return tensor
            args = [self.eval(a) for a in node.args]
            if isinstance(node.func, ast.Attribute) and func not in self.names:
                with contextlib.suppress(Unknown):
                    base = self.eval(node.func.value)
                    if isinstance(base, TensorShape):
                        return base.method(node.func.attr, args)
            if func in ("bool", "len") and len(args) == 1:
                return bool(args[0]) if func == "bool" else len(args[0])
            if func in ("int", "cp.int32", "cp.int64", "cupy.int32", "cupy.int64", "np.int32", "np.int64",
                        "numpy.int32", "numpy.int64") and len(args) == 1:
                return int(args[0])
            if func in ("min", "max") and args:
                return (min if func == "min" else max)(*args)
            if func in ("triton.cdiv", "cdiv", "math.ceil") and len(args) in (1, 2):
                return -(-args[0] // args[1]) if len(args) == 2 else -(-args[0] // 1)
        raise Unknown(f"`{ast.unparse(node)}` is only known at run time")

    def _compare(self, node: ast.Compare) -> bool:
        ops = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
               ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}
        left = self.eval(node.left)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = self.eval(comparator)
            if type(op) not in ops or isinstance(left, TensorShape) or isinstance(right, TensorShape):
                raise Unknown("comparison not modelled")
            if not ops[type(op)](left, right):
                return False
            left = right
        return True

    def _subscript(self, node: ast.Subscript):
        value = self.eval(node.value)
        if not isinstance(value, tuple):
            raise Unknown(f"`{ast.unparse(node)}` is only known at run time")
        if isinstance(node.slice, ast.Slice):
            bounds = [None if part is None else self.eval(part) for part in (node.slice.lower, node.slice.upper)]
            return value[bounds[0]:bounds[1]]
        return value[self.eval(node.slice)]

    def _tensor_call(self, node: ast.Call, func: str) -> TensorShape | None:
        """`torch.randn(b, n)`, `torch.empty((b, n), dtype=...)`, `torch.empty_like(x)`: a new tensor's shape."""
        module, _, name = func.rpartition(".")
        if module not in ("torch", "th"):
            return None
        if name in _LIKE and node.args:
            like = self.eval(node.args[0])
            return like if isinstance(like, TensorShape) else None
        if name not in _FACTORIES:
            return None
        args = [self.eval(a) for a in node.args]
        if name == "randint":
            size = args[2] if len(args) > 2 else next((self.eval(k.value) for k in node.keywords if k.arg == "size"),
                                                      None)
            args = [size] if size is not None else []
        elif name == "full":
            args = args[:1]
        if len(args) == 1 and isinstance(args[0], tuple | list):
            args = list(args[0])
        if not args or not all(isinstance(a, int) for a in args):
            raise Unknown(f"`{func}` with sizes only known at run time")
        return TensorShape(tuple(args), _dtype_bytes(node.keywords) if name != "randint" else 8)


def reference_inputs(reference_source: str, params: dict[str, object]) -> list | None:
    """The shapes `get_inputs()` returns at one configuration, read from its source without running
    it (a KernelBench reference builds them with torch factories over its size constants); None
    where the function is beyond this model."""
    try:
        tree = python_ast.parse(reference_source)
    except SyntaxError:
        return None
    constants = {**_module_constants(tree), **params}
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs"), None)
    if function is None:
        return None
    names = _local_names(function, constants)
    returned = next((n.value for n in ast.walk(function) if isinstance(n, ast.Return) and n.value is not None), None)
    try:
        inputs = _PyEval(names).eval(returned) if returned is not None else None
    except (Unknown, ArithmeticError, TypeError, IndexError, ValueError):
        return None
    return list(inputs) if isinstance(inputs, tuple) else None


def _module_constants(tree: ast.Module, too_large: list[str] | None = None) -> dict[str, object]:
    """The module-level constants that evaluate; those past the bounds are named in `too_large`."""
    names: dict[str, object] = {}
    evaluator = _PyEval(names)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                names[node.targets[0].id] = evaluator.eval(node.value)
            except TooLargeToEvaluate as exc:
                if too_large is not None:
                    too_large.append(f"{node.targets[0].id} ({exc})")
            except (Unknown, ArithmeticError, TypeError, ValueError):
                continue
    return names


def _kernel_bindings(tree: ast.Module) -> dict[str, str]:
    """Python expression text (`_relu`, `self.k`) → CUDA kernel name, from RawKernel/get_function calls."""
    bindings: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        name = _kernel_name_of(node.value)
        if name:
            for target in node.targets:
                bindings[ast.unparse(target)] = name
    return bindings


def _kernel_name_of(call: ast.Call) -> str | None:
    func = ast.unparse(call.func)
    if func.endswith("RawKernel"):
        if len(call.args) > 1 and isinstance(call.args[1], ast.Constant):
            return str(call.args[1].value)
        for keyword in call.keywords:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
    if func.endswith("get_function") and call.args and isinstance(call.args[0], ast.Constant):
        return str(call.args[0].value)
    return None


_NAMED = ast.Name | ast.Attribute


def _assigned_pairs(node: ast.Assign) -> list[tuple[tuple[str, ...], ast.AST]]:
    """(target texts, value) of `a = v`, `self.a = v` and `a, b = v, w` (element by element); a tuple
    target over any other value (`rows, cols = x.shape`) is one pair of several names, unpacked once
    evaluated."""
    if len(node.targets) != 1:
        return []
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [pair for t, v in zip(target.elts, value.elts, strict=True) for pair in _assigned_pairs(
            ast.Assign(targets=[t], value=v))]
    if isinstance(target, _NAMED):
        return [((ast.unparse(target),), value)]
    if isinstance(target, ast.Tuple) and all(isinstance(e, _NAMED) for e in target.elts):
        return [(tuple(ast.unparse(e) for e in target.elts), value)]
    return []


def _bind(names: dict[str, object], targets: tuple[str, ...], value) -> None:
    """Store one evaluated assignment; several targets take the elements of a tuple value."""
    if len(targets) == 1:
        names[targets[0]] = value
    elif isinstance(value, tuple) and len(value) == len(targets):
        names.update(zip(targets, value, strict=True))
    else:
        raise Unknown(f"cannot unpack into {', '.join(targets)}")


def _local_names(function: ast.FunctionDef, constants: dict[str, object]) -> dict[str, object]:
    names = dict(constants)
    evaluator = _PyEval(names)
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign):
            continue
        for targets, value in _assigned_pairs(node):
            try:
                _bind(names, targets, evaluator.eval(value))
            except (Unknown, ArithmeticError, TypeError, IndexError, ValueError):
                for name in targets:
                    names.pop(name, None) if name not in constants else None
    return names


def _init_attributes(tree: ast.Module, constants: dict[str, object], init_values: dict[str, object]) -> dict:
    """`self.X` values a module's `__init__` methods set from their parameters. A parameter takes the
    configuration value of the same name: KernelBench's get_init_inputs passes the problem's size
    constants (kernel_size, stride, ...) and `ModelNew(kernel_size, stride, padding)` names them alike."""
    found: dict[str, object] = {}
    lowered = {str(k).lower(): v for k, v in init_values.items()}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef) or function.name != "__init__":
            continue
        bound = {a.arg: lowered[a.arg.lower()] for a in function.args.args if a.arg.lower() in lowered}
        names = _local_names(function, {**constants, **bound})
        found.update({k: v for k, v in names.items() if k.startswith("self.")})
    return found


def python_launch_sites(source: str, kernel_names: set[str] | frozenset[str] = frozenset(),
                        init_values: dict[str, object] | None = None,
                        forward_inputs: list | None = None, notes: list[str] | None = None) -> list[LaunchSite]:
    """CuPy launches `k(grid, block, args, shared_mem=...)` of RawKernel / RawModule functions.

    Also `helper("name")(grid, block, args)`, a lookup function called with a kernel's name.
    `init_values` (the configuration's parameters) give `__init__` parameters of the same name;
    `forward_inputs` (`reference_inputs`) give `forward`'s parameters their shapes, so sizes and
    flags the launch derives from them (`cols % 4 == 0`) reach the kernel's scalar arguments.
    `notes` gets a line naming the module constants too large to evaluate (left unknown).
    """
    try:
        tree = python_ast.parse(source)
    except SyntaxError:
        return []
    too_large: list[str] = []
    constants = _module_constants(tree, too_large)
    if too_large and notes is not None:
        notes.append(f"module constants too large to evaluate, left unknown: {'; '.join(too_large[:5])}")
    constants.update(_init_attributes(tree, constants, init_values or {}))
    bindings = _kernel_bindings(tree)
    sites: list[LaunchSite] = []
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    scopes = [(f, _local_names(f, {**constants, **_forward_bindings(f, forward_inputs)})) for f in functions]
    scopes.append((tree, constants))
    strings = _string_names(tree)
    seen: set[int] = set()
    for scope, names in scopes:
        loops = {id(n) for loop in ast.walk(scope) if isinstance(loop, ast.For | ast.While) for n in ast.walk(loop)}
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call) or id(node) in seen:
                continue
            callee = ast.unparse(node.func)
            kernels = [bindings[callee]] if callee in bindings else []
            if not kernels and isinstance(node.func, ast.Call):
                kernels = _looked_up_kernels(node.func, kernel_names, strings)
            if not kernels:
                continue
            seen.add(id(node))
            arguments = {"grid": node.args[0] if node.args else None,
                         "block": node.args[1] if len(node.args) > 1 else None,
                         "args": node.args[2] if len(node.args) > 2 else None, "shared_mem": None}
            for keyword in node.keywords:
                if keyword.arg in arguments:
                    arguments[keyword.arg] = keyword.value
            evaluator = _PyEval(names)
            branch = _py_branch(node, parents)
            for index, kernel in enumerate(kernels):
                # one call site that picks its kernel at run time: the choices exclude each other
                choice = ((id(node), index),) if len(kernels) > 1 else ()
                sites.append(LaunchSite(
                    kernel=kernel, block=_py_dims(evaluator, arguments["block"]),
                    grid=_py_dims(evaluator, arguments["grid"]),
                    dynamic_smem=int(_py_value(evaluator, arguments["shared_mem"]) or 0),
                    scalar_args=_py_scalars(evaluator, arguments["args"]), origin="cupy-launch",
                    in_loop=id(node) in loops, line=node.lineno, branch=branch + choice))
    return sorted(sites, key=lambda s: s.line)


def _forward_bindings(function: ast.FunctionDef | ast.AsyncFunctionDef, inputs: list | None) -> dict[str, object]:
    """`forward(self, x, w)` called with get_inputs()'s values, in order."""
    if function.name != "forward" or not inputs:
        return {}
    params = [a.arg for a in function.args.args if a.arg != "self"]
    return {name: value for name, value in zip(params, inputs, strict=False) if value is not None}


def _string_names(tree: ast.Module) -> dict[str, set[str]]:
    """Names assigned string constants (or a conditional choice between them) anywhere in the module."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values = [node.value] if not isinstance(node.value, ast.IfExp) else [node.value.body, node.value.orelse]
            texts = {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
            if texts:
                found.setdefault(node.targets[0].id, set()).update(texts)
    return found


def _looked_up_kernels(call: ast.Call, kernel_names, strings: dict[str, set[str]]) -> list[str]:
    """`get("name")` or `get(name_var)`: the kernels a lookup helper can return, by the names it is given."""
    named = _kernel_name_of(call)
    if named:
        return [named]
    argument = call.args[0] if call.args else None
    if isinstance(argument, ast.Constant) and argument.value in kernel_names:
        return [str(argument.value)]
    if isinstance(argument, ast.Name):
        return sorted(strings.get(argument.id, set()) & set(kernel_names))
    return []


def _py_branch(node: ast.AST, parents: dict[int, ast.AST]) -> tuple[tuple[int, int], ...]:
    arms = []
    child = node
    while id(child) in parents:
        parent = parents[id(child)]
        if isinstance(parent, ast.If | ast.IfExp):
            body = parent.body if isinstance(parent.body, list) else [parent.body]
            orelse = parent.orelse if isinstance(parent.orelse, list) else [parent.orelse]
            if any(child is b for b in body):
                arms.append((id(parent), 0))
            elif any(child is b for b in orelse):
                arms.append((id(parent), 1))
        child = parent
    return tuple(arms)


def _py_value(evaluator: _PyEval, node: ast.AST | None):
    if node is None:
        return None
    try:
        return evaluator.eval(node)
    except (Unknown, ArithmeticError, TypeError, ValueError):
        return None


def _py_dims(evaluator: _PyEval, node: ast.AST | None) -> tuple[int, int, int] | None:
    value = _py_value(evaluator, node)
    if isinstance(value, int | float):
        return (int(value), 1, 1)
    if isinstance(value, tuple) and value and all(isinstance(v, int | float) for v in value):
        parts = [int(v) for v in value[:3]]
        return tuple(parts + [1] * (3 - len(parts)))  # type: ignore[return-value]
    return None


def _py_scalars(evaluator: _PyEval, node: ast.AST | None) -> dict[int, int | float]:
    if not isinstance(node, ast.Tuple | ast.List):
        return {}
    values = {}
    for index, element in enumerate(node.elts):
        value = _py_value(evaluator, element)
        if isinstance(value, int | float):
            values[index] = value
    return values


# -- choosing one configuration per kernel --------------------------------------------------------

def launch_for(kernel: FunctionDef, sites: list[LaunchSite], macros: dict[str, Macro],
               given: tuple[int, int, int] | None = None) -> LaunchConfig:
    """The configuration to model `kernel` with; the first launch site with a known block wins."""
    own = [s for s in sites if s.kernel == kernel.name]
    unknown = tuple(dict.fromkeys(name for s in own for name in s.unknown))
    if given is not None:
        grid = next((s.grid for s in own if s.grid), None)
        return LaunchConfig(kernel.name, given, grid, origin="given", unknown=unknown)
    for site in own:
        if site.block is not None:
            note = "" if len(own) == 1 else f"{len(own)} launch sites; the first with a known block is modelled"
            return LaunchConfig(kernel.name, site.block, site.grid, site.dynamic_smem, site.origin, note, unknown)
    if kernel.launch_bounds:
        ev = Evaluator(1, macros)
        try:
            threads = int(ev.vector(_expr(kernel.launch_bounds[0]), Env())[0])
            return LaunchConfig(kernel.name, (threads, 1, 1), None, 0, "launch-bounds",
                                "block size taken from __launch_bounds__", unknown)
        except (Unknown, TypeError):
            pass
    where = "its launch's block size is computed at run time" if own else "no launch of it was found"
    return LaunchConfig(kernel.name, ASSUMED_BLOCK, None, 0, "assumed",
                        f"{where}: {ASSUMED_BLOCK[0]} threads per block assumed", unknown)


def _expr(source: str) -> Node:
    from engine.analysis.source.cuda_ast import parse_expression

    node = parse_expression(source)
    if node is None:
        raise Unknown(f"cannot parse {source!r}")
    return node
