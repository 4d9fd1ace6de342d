"""Evaluates CUDA expressions for every lane of one warp at once, to see the addresses a warp touches.

Each value is a numpy vector with one entry per lane (threadIdx differs across lanes; blockIdx
and sizes do not), so `in[y * n + x]` becomes 32 concrete byte addresses whose sectors and banks
can be counted. Anything that depends on data loaded from memory, or on a name with no static
value, raises `Unknown` with the reason, and the access is reported as not estimable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from engine.analysis.source.cuda_ast import Macro, Node, call_name, parse_expression, text
from engine.analysis.source.layouts import POINTER_BYTES, Layout, scalar_bytes

MAX_MACRO_DEPTH = 16


class Unknown(Exception):
    """The expression has no static value; the message says why.

    `names` are the variables whose missing values caused it (a name with no definition, or one
    declared from something unknown), so a caller can ask for exactly those sizes.
    """

    def __init__(self, message: str = "", names: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.names = names


@dataclass
class Pointer:
    """A memory reference: which array, which address space, and the byte offset per lane."""

    root: str
    space: str  # global | shared | local
    elem_bytes: int
    offset: np.ndarray  # bytes from the array's start, per lane
    dims: tuple[int | None, ...] = ()  # array extents (shared/local arrays); () for a plain pointer
    type_name: str = ""

    levels: int = 1  # 2: its elements are pointers themselves (`const char* const* rows`)
    # where each lane's own base address was loaded from (`rows[tid]`), when it differs across lanes:
    # `offset` is then relative to each lane's base
    lane_bases: str = ""
    struct: str = ""  # a member of a struct of this type (`out[i].h0`): lanes are the struct's size apart

    def with_type(self, type_name: str, elem_bytes: int) -> Pointer:
        return Pointer(self.root, self.space, elem_bytes, self.offset, (), type_name, 1, self.lane_bases)

    def moved(self, offset: np.ndarray) -> Pointer:
        """The same reference at other byte offsets."""
        return Pointer(self.root, self.space, self.elem_bytes, offset, self.dims, self.type_name, self.levels,
                       self.lane_bases)


@dataclass
class Undefined:
    """A name that exists but has no static value (e.g. a value loaded from memory)."""

    reason: str
    names: tuple[str, ...] = ()  # the variables whose values would give it one (see `Unknown.names`)


Value = np.ndarray | tuple | Pointer | Undefined


@dataclass
class Env:
    """Lexical scopes of a function body, innermost last."""

    vars: dict[str, Value] = field(default_factory=dict)
    parent: Env | None = None

    def child(self) -> Env:
        return Env(parent=self)

    def root(self) -> Env:
        """The outermost scope: the names a function starts with (threadIdx, blockIdx, its parameters)."""
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope

    def lookup(self, name: str) -> Value:
        scope: Env | None = self
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        raise KeyError(name)

    def define(self, name: str, value: Value) -> None:
        self.vars[name] = value

    def assign(self, name: str, value: Value) -> None:
        scope: Env | None = self
        while scope is not None:
            if name in scope.vars:
                scope.vars[name] = value
                return
            scope = scope.parent
        self.vars[name] = value


_INT_TYPES = ("int", "long", "short", "char", "size_t", "unsigned", "int32_t", "int64_t", "uint32_t", "uint64_t")
_MINMAX = {"min": np.minimum, "max": np.maximum, "umin": np.minimum, "umax": np.maximum, "llmin": np.minimum,
           "llmax": np.maximum, "fminf": np.minimum, "fmaxf": np.maximum, "fmin": np.minimum, "fmax": np.maximum}
_CASTS = ("static_cast", "int", "unsigned", "size_t", "int64_t", "long", "float", "double")
_BUILTIN_CONSTANTS = {"warpSize": 32, "true": 1, "false": 0, "nullptr": 0, "NULL": 0, "INT_MAX": 2**31 - 1}


def _number(literal: str) -> int | float:
    raw = literal.replace("'", "")
    if raw.lower().startswith("0x"):
        return int(raw.rstrip("uUlL"), 16)
    if raw.lower().startswith("0b"):
        return int(raw.rstrip("uUlL"), 2)
    stripped = raw.rstrip("uUlLfF") if not re.search(r"[.eE]", raw) else raw.rstrip("fFlL")
    if re.search(r"[.eE]", stripped):
        return float(stripped)
    return int(stripped, 8) if len(stripped) > 1 and stripped.startswith("0") else int(stripped)


def _c_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.any(b == 0):
        raise Unknown("division by zero in an index expression")
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return a / b
    quotient = np.abs(a) // np.abs(b)
    return np.where((a < 0) ^ (b < 0), -quotient, quotient)


def _c_mod(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return np.fmod(a, b)
    return a - b * _c_div(a, b)


_BINARY = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": _c_div, "%": _c_mod,
    "<<": lambda a, b: np.left_shift(a.astype(np.int64), b.astype(np.int64)),
    ">>": lambda a, b: np.right_shift(a.astype(np.int64), b.astype(np.int64)),
    "&": lambda a, b: np.bitwise_and(a.astype(np.int64), b.astype(np.int64)),
    "|": lambda a, b: np.bitwise_or(a.astype(np.int64), b.astype(np.int64)),
    "^": lambda a, b: np.bitwise_xor(a.astype(np.int64), b.astype(np.int64)),
    "<": lambda a, b: (a < b).astype(np.int64), ">": lambda a, b: (a > b).astype(np.int64),
    "<=": lambda a, b: (a <= b).astype(np.int64), ">=": lambda a, b: (a >= b).astype(np.int64),
    "==": lambda a, b: (a == b).astype(np.int64), "!=": lambda a, b: (a != b).astype(np.int64),
    "&&": lambda a, b: ((a != 0) & (b != 0)).astype(np.int64),
    "||": lambda a, b: ((a != 0) | (b != 0)).astype(np.int64),
}


class Evaluator:
    """Values of expressions over the lanes of one warp, given the names the analysis knows."""

    def __init__(self, lanes: int, macros: dict[str, Macro] | None = None,
                 device_functions: dict | None = None, default_elem_bytes: int = 4,
                 layouts: dict[str, Layout] | None = None) -> None:
        self.lanes = lanes
        self.layouts = layouts or {}
        self.macros = macros or {}
        self.device_functions = device_functions or {}
        self.default_elem_bytes = default_elem_bytes
        self._macro_depth = 0

    # -- helpers ---------------------------------------------------------------------------------
    def const(self, value: int | float) -> np.ndarray:
        return np.full(self.lanes, value, dtype=np.float64 if isinstance(value, float) else np.int64)

    def vector(self, node: Node, env: Env) -> np.ndarray:
        value = self.value(node, env)
        if isinstance(value, np.ndarray):
            return value
        if isinstance(value, Undefined):
            raise Unknown(value.reason, value.names)
        if isinstance(value, Pointer):
            raise Unknown(f"`{text(node)}` is a pointer, not a number")
        raise Unknown(f"`{text(node)}` is not a scalar")

    def elem_bytes_of(self, type_name: str) -> int:
        return scalar_bytes(type_name, self.layouts) or self.default_elem_bytes

    def layout_of(self, type_name: str) -> Layout | None:
        """The struct layout of a type name (`const sha1_ctx` → sha1_ctx's), if the file defines it."""
        cleaned = [w for w in type_name.replace("*", " ").split() if w not in ("const", "volatile", "struct")]
        return self.layouts.get(cleaned[-1].split("::")[-1]) if cleaned else None


    # -- expressions -----------------------------------------------------------------------------
    def value(self, node: Node, env: Env) -> Value:
        kind = node.type
        if kind == "number_literal":
            return self.const(_number(text(node)))
        if kind in ("true", "false", "null", "nullptr"):
            return self.const(_BUILTIN_CONSTANTS.get(text(node), 0))
        if kind == "identifier":
            return self.identifier(text(node), env)
        if kind == "qualified_identifier":
            return self.qualified(node, env)
        if kind == "parenthesized_expression":
            inner = [c for c in node.children if c.is_named]
            return self.value(inner[-1], env) if inner else self.const(0)
        if kind == "field_expression":
            return self.field(node, env)
        if kind == "binary_expression":
            op = text(node.child_by_field_name("operator"))
            left = self.value(node.child_by_field_name("left"), env)
            right = self.value(node.child_by_field_name("right"), env)
            if isinstance(left, Pointer) or isinstance(right, Pointer):
                raise Unknown("pointer arithmetic used as a number")
            left, right = self._numeric(left, node), self._numeric(right, node)
            if op not in _BINARY:
                raise Unknown(f"operator {op} not modelled")
            return _BINARY[op](left, right)
        if kind == "unary_expression":
            op = text(node.child_by_field_name("operator"))
            arg = self.vector(node.child_by_field_name("argument"), env)
            return {"-": lambda a: -a, "+": lambda a: a, "!": lambda a: (a == 0).astype(np.int64),
                    "~": lambda a: np.invert(a.astype(np.int64))}.get(op, lambda a: a)(arg)
        if kind == "cast_expression":
            inner = self.value(node.child_by_field_name("value"), env)
            type_text = text(node.child_by_field_name("type"))
            if isinstance(inner, np.ndarray) and "*" not in type_text:
                if any(t in type_text for t in _INT_TYPES):
                    return np.trunc(inner).astype(np.int64) if inner.dtype.kind == "f" else inner
                if "float" in type_text or "double" in type_text:
                    return inner.astype(np.float64)
            return inner
        if kind == "conditional_expression":
            cond = self.vector(node.child_by_field_name("condition"), env)
            yes = self.value(node.child_by_field_name("consequence"), env)
            no = self.value(node.child_by_field_name("alternative"), env)
            if isinstance(yes, np.ndarray) and isinstance(no, np.ndarray):
                return np.where(cond != 0, yes, no)
            return yes if np.all(cond != 0) else no
        if kind == "call_expression":
            return self.call(node, env)
        if kind == "sizeof_expression":
            target = node.child_by_field_name("type") or node.child_by_field_name("value")
            return self.const(self.elem_bytes_of(text(target)))
        if kind in ("assignment_expression",):
            return self.value(node.child_by_field_name("right"), env)
        if kind == "comma_expression":
            return self.value(node.child_by_field_name("right"), env)
        if kind == "update_expression":
            return self.value(node.child_by_field_name("argument"), env)
        if kind in ("subscript_expression", "pointer_expression"):
            raise Unknown(f"`{text(node)}` is a value loaded from memory (a data-dependent index)")
        raise Unknown(f"`{text(node)}` ({kind}) is not modelled")

    def _numeric(self, value: Value, node: Node) -> np.ndarray:
        if isinstance(value, np.ndarray):
            return value
        if isinstance(value, Undefined):
            raise Unknown(value.reason, value.names)
        raise Unknown(f"`{text(node)}` mixes vectors of dim3 and numbers")

    def identifier(self, name: str, env: Env) -> Value:
        try:
            return env.lookup(name)
        except KeyError:
            pass
        if name in self.macros and self.macros[name].params is None:
            return self.macro(self.macros[name], [], env)
        if name in _BUILTIN_CONSTANTS:
            return self.const(_BUILTIN_CONSTANTS[name])
        raise Unknown(f"`{name}` has no value known before the kernel runs", (name,))

    def qualified(self, node: Node, env: Env) -> Value:
        """`Cfg::TILE` (a struct's static constant) or `cfg::TILE` (a namespace's, kept by its own name)."""
        full = text(node).replace(" ", "")
        if full in self.macros and self.macros[full].params is None:
            return self.macro(self.macros[full], [], env)
        name = full.rsplit("::", 1)[-1]
        if name in self.macros and self.macros[name].params is None:
            return self.macro(self.macros[name], [], env)
        raise Unknown(f"`{full}` has no value known before the kernel runs", (full,))

    def field(self, node: Node, env: Env) -> Value:
        try:
            return env.lookup("".join(text(node).split()))  # a member of a struct argument (`job.len`)
        except KeyError:
            pass
        if self.member(node, env) is not None:
            raise Unknown(f"`{text(node)}` is a value loaded from memory (a data-dependent index)")
        base = self.value(node.child_by_field_name("argument"), env)
        member = text(node.child_by_field_name("field"))
        if isinstance(base, tuple) and member in ("x", "y", "z"):
            return base["xyz".index(member)]
        if isinstance(base, Undefined):
            raise Unknown(base.reason, base.names)
        raise Unknown(f"`{text(node)}` is a field access that is not modelled")

    def macro(self, macro: Macro, args: list[Value], env: Env) -> Value:
        if self._macro_depth > MAX_MACRO_DEPTH:
            raise Unknown(f"macro {macro.name} expands too deeply")
        body = parse_expression(macro.body) if macro.body else None
        if body is None:
            raise Unknown(f"macro {macro.name} is not an expression")
        scope = Env(parent=None)
        for name, value in zip(macro.params or (), args, strict=False):
            scope.define(name, value)
        scope.parent = env
        self._macro_depth += 1
        try:
            return self.value(body, scope)
        finally:
            self._macro_depth -= 1

    def call(self, node: Node, env: Env) -> Value:
        name = call_name(node)
        args_node = node.child_by_field_name("arguments")
        arg_nodes = [c for c in args_node.children if c.is_named and c.type != "comment"] if args_node else []
        if name in self.macros and self.macros[name].params is not None:
            return self.macro(self.macros[name], [self.value(a, env) for a in arg_nodes], env)
        if name == "dim3":
            values = [self.vector(a, env) for a in arg_nodes][:3]
            return tuple(values + [self.const(1)] * (3 - len(values)))
        if name in _MINMAX and len(arg_nodes) == 2:
            return _MINMAX[name](self.vector(arg_nodes[0], env), self.vector(arg_nodes[1], env))
        if name in ("abs", "llabs", "fabsf", "fabs") and arg_nodes:
            return np.abs(self.vector(arg_nodes[0], env))
        if name in ("__mul24", "__umul24") and len(arg_nodes) == 2:
            return self.vector(arg_nodes[0], env) * self.vector(arg_nodes[1], env)
        if name in _CASTS and len(arg_nodes) == 1:
            value = self.value(arg_nodes[0], env)
            if isinstance(value, np.ndarray) and name not in ("float", "double") and value.dtype.kind == "f":
                return np.trunc(value).astype(np.int64)
            return value
        if name in self.device_functions:
            return self.device_call(self.device_functions[name], [self.value(a, env) for a in arg_nodes], env)
        raise Unknown(f"call to `{name}` is not modelled")

    def device_call(self, function, args: list[Value], env: Env) -> Value:
        """A `__device__` helper whose body is declarations and one `return expr;`."""
        if self._macro_depth > MAX_MACRO_DEPTH or function.body is None:
            raise Unknown(f"{function.name} cannot be inlined")
        scope = Env(parent=env.root())  # a helper sees its parameters and the built-ins (threadIdx, ...)
        for param, value in zip(function.params, args, strict=False):
            scope.define(param.name, value)
        self._macro_depth += 1
        try:
            for statement in function.body.children:
                if statement.type == "declaration":
                    for declarator in statement.children:
                        if declarator.type == "init_declarator":
                            scope.define(text(declarator.child_by_field_name("declarator")),
                                         self.value(declarator.child_by_field_name("value"), scope))
                elif statement.type == "return_statement":
                    expr = [c for c in statement.children if c.is_named]
                    if expr:
                        return self.value(expr[0], scope)
            raise Unknown(f"{function.name} has no simple return")
        finally:
            self._macro_depth -= 1

    def device_pointer(self, node: Node, env: Env) -> Pointer | None:
        """The pointer a `__device__` helper returns (`row_of(a, r, n)` → `a + r * n`), when its body is
        declarations and one `return`."""
        function = self.device_functions[call_name(node)]
        args_node = node.child_by_field_name("arguments")
        arg_nodes = [c for c in args_node.children if c.is_named and c.type != "comment"] if args_node else []
        if self._macro_depth > MAX_MACRO_DEPTH or function.body is None:
            return None
        scope = Env(parent=env.root())
        for param, arg in zip(function.params, arg_nodes, strict=False):
            if param.is_pointer:
                scope.define(param.name, self.pointer(arg, env) or Undefined(f"`{text(arg)}` is not followed"))
            else:
                try:
                    scope.define(param.name, self.value(arg, env))
                except Unknown as exc:
                    scope.define(param.name, Undefined(str(exc), exc.names))
        self._macro_depth += 1
        try:
            for statement in function.body.children:
                if statement.type == "declaration":
                    for declarator in statement.children:
                        if declarator.type == "init_declarator":
                            name = text(declarator.child_by_field_name("declarator")).lstrip("*& ")
                            value = declarator.child_by_field_name("value")
                            scope.define(name, self.pointer(value, scope) or self.value(value, scope))
                elif statement.type == "return_statement":
                    expr = [c for c in statement.children if c.is_named]
                    return self.pointer(expr[0], scope) if expr else None
            return None
        finally:
            self._macro_depth -= 1

    # -- memory references -----------------------------------------------------------------------
    def pointer(self, node: Node, env: Env) -> Pointer | None:
        """The memory reference an expression denotes, or None if it is not a known array."""
        kind = node.type
        if kind == "identifier":
            try:
                value = env.lookup(text(node))
            except KeyError:
                return None
            return value if isinstance(value, Pointer) else None
        if kind == "parenthesized_expression":
            inner = [c for c in node.children if c.is_named]
            return self.pointer(inner[-1], env) if inner else None
        if kind == "cast_expression":
            base = self.pointer(node.child_by_field_name("value"), env)
            type_node = node.child_by_field_name("type")
            if base is None or "*" not in text(type_node):
                return base
            inner_type = text(type_node.child_by_field_name("type"))
            return base.with_type(inner_type, self.elem_bytes_of(inner_type))
        if kind == "call_expression" and call_name(node) in ("reinterpret_cast", "static_cast", "const_cast"):
            function = node.child_by_field_name("function")
            args = [c for c in node.child_by_field_name("arguments").children if c.is_named]
            base = self.pointer(args[0], env) if args else None
            if base is None or function.type != "template_function":
                return base
            descriptor = [c for c in function.child_by_field_name("arguments").children if c.is_named]
            if descriptor and "*" in text(descriptor[0]):
                inner_type = text(descriptor[0].child_by_field_name("type"))
                return base.with_type(inner_type, self.elem_bytes_of(inner_type))
            return base
        if kind == "binary_expression" and text(node.child_by_field_name("operator")) in ("+", "-"):
            op = text(node.child_by_field_name("operator"))
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            base = self.pointer(left, env)
            offset_node = right
            if base is None and op == "+":
                base, offset_node = self.pointer(right, env), left
            if base is None:
                return None
            try:
                offset = self.vector(offset_node, env) * base.elem_bytes
            except Unknown:
                loaded = self.per_lane_load(offset_node, env) if op == "+" and not base.lane_bases else None
                if loaded is None:
                    raise
                # `base + offsets[tid]`: each lane starts where its own loaded offset says
                return Pointer(base.root, base.space, base.elem_bytes, base.offset * 0, (), base.type_name,
                               base.levels, loaded)
            return Pointer(base.root, base.space, base.elem_bytes,
                           base.offset + (offset if op == "+" else -offset), (), base.type_name, base.levels,
                           base.lane_bases)
        if kind == "update_expression":  # `*p++` reads where p points now; `*++p` one element on
            base = self.pointer(node.child_by_field_name("argument"), env)
            operator = text(node.child_by_field_name("operator"))
            if base is None or node.start_byte != node.child_by_field_name("operator").start_byte:
                return base
            step = base.elem_bytes if operator == "++" else -base.elem_bytes
            return base.moved(base.offset + step)
        if kind == "call_expression" and call_name(node) in self.device_functions:
            return self.device_pointer(node, env)
        if kind == "field_expression":
            return self.member(node, env)
        if kind == "subscript_expression" or (
                kind == "pointer_expression" and text(node.child_by_field_name("operator")) == "*"):
            return self.loaded_pointer(node, env)
        if kind == "pointer_expression" and text(node.child_by_field_name("operator")) == "&":
            target = node.child_by_field_name("argument")
            if target.type == "subscript_expression":
                element = self.element(target, env)
                if element is not None:
                    return element
            return self.pointer(target, env)
        return None

    def element(self, node: Node, env: Env) -> Pointer | None:
        """The element a subscript chain `a[i][j]` designates (offset in bytes), or None if `a` is unknown."""
        indices: list[Node] = []
        current = innermost = node
        while current.type == "subscript_expression":
            index_list = current.child_by_field_name("indices")
            named = [c for c in index_list.children if c.is_named] if index_list else []
            if not named:
                return None
            indices.insert(0, named[0])
            innermost, current = current, current.child_by_field_name("argument")
        base = self.pointer(current, env)
        if base is None:
            return None
        if base.levels >= 2 and not base.dims and len(indices) > 1:  # `rows[tid][i]`: through the loaded pointer
            loaded = self.loaded_pointer(innermost, env)
            if loaded is None:
                return None
            base, indices = loaded, indices[1:]
        dims = base.dims
        if dims and len(indices) != len(dims):
            return None  # a row of a multi-dimensional array, not an element
        if not dims and len(indices) != 1:
            return None
        linear = self.const(0)
        for position, index in enumerate(indices):
            extent = dims[position] if dims else None
            if position > 0:
                if extent is None:
                    raise Unknown(f"extent of {base.root} is not known")
                linear = linear * extent
            linear = linear + self.vector(index, env)
        return Pointer(base.root, base.space, base.elem_bytes, base.offset + linear * base.elem_bytes, (),
                       base.type_name, base.levels, base.lane_bases)

    def member(self, node: Node, env: Env) -> Pointer | None:
        """The memory a field expression designates: `out[i].h0` or `p->h0` (a member of a struct in memory,
        at its offset and with its own width), or a pointer member of a struct argument (`job.data`)."""
        try:
            value = env.lookup("".join(text(node).split()))
        except KeyError:
            value = None
        if isinstance(value, Pointer):
            return value
        argument, name = node.child_by_field_name("argument"), text(node.child_by_field_name("field"))
        if text(node.child_by_field_name("operator")) == "->":
            base = self.pointer(argument, env)
        elif argument.type == "subscript_expression":
            base = self.element(argument, env)
        elif argument.type == "field_expression":
            base = self.member(argument, env)
        else:
            return None
        if base is None or base.levels != 1:
            return None
        layout = self.layout_of(base.type_name)
        member = layout.members.get(name) if layout is not None else None
        if member is None:
            return None
        at = base.offset + member.offset
        if member.is_pointer:  # the member holds an address: what it points to is loaded per lane
            return Pointer(text(node), "global", self.elem_bytes_of(member.type_name), self.const(0), (),
                           member.type_name, 1, text(node) if np.any(at != at[0]) or base.lane_bases else "")
        dims = (member.count,) if member.count > 1 else ()
        return Pointer(base.root, base.space, member.bytes, at, dims, member.type_name, 1, base.lane_bases,
                       layout.name)

    def loaded_pointer(self, node: Node, env: Env) -> Pointer | None:
        """`rows[tid]` or `*rows` on an array of pointers: the pointer each lane loads. Where the lanes load
        different elements, each has its own base (`lane_bases`); where all load the same one, the base is
        common and the offsets that follow are exact relative to it."""
        if node.type == "subscript_expression":
            current = node
            while current.type == "subscript_expression":
                current = current.child_by_field_name("argument")
            base = self.pointer(current, env)
            if base is None or base.levels < 2:
                return None
            slot = self.element(node, env)
        else:
            base = slot = self.pointer(node.child_by_field_name("argument"), env)
            if base is None or base.levels < 2:
                return None
        if slot is None:
            return None
        levels = base.levels - 1
        elem = POINTER_BYTES if levels > 1 else self.elem_bytes_of(base.type_name)
        varies = bool(np.any(slot.offset != slot.offset[0])) or bool(base.lane_bases)
        return Pointer(text(node), base.space, elem, self.const(0), (), base.type_name, levels,
                       text(node) if varies else "")

    def per_lane_load(self, node: Node, env: Env) -> str | None:
        """The text of a value loaded from memory at a different index in each lane (`offsets[tid]` in
        `base + offsets[tid]`), when `node` is such a load, possibly cast or scaled by a known factor."""
        while node.type in ("parenthesized_expression", "cast_expression"):
            named = [c for c in node.children if c.is_named]
            node = node.child_by_field_name("value") or named[-1]
        if node.type == "binary_expression" and text(node.child_by_field_name("operator")) == "*":
            for side, other in (("left", "right"), ("right", "left")):
                try:
                    self.vector(node.child_by_field_name(other), env)
                except Unknown:
                    continue
                return self.per_lane_load(node.child_by_field_name(side), env)
            return None
        if node.type != "subscript_expression":
            return None
        try:
            slot = self.element(node, env)
        except Unknown:
            return None
        if slot is None or not np.any(slot.offset != slot.offset[0]):
            return None
        return text(node)
