"""Walks a function body statement by statement, keeping the values of its local names.

The model is "the first trip through every loop, both arms of every branch": enough to know the
address each lane forms in straight-line index arithmetic, which is what coalescing and bank
conflicts depend on. A visitor sees every expression with the scope and loop depth it runs in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.analysis.source.cuda_ast import Node, parse_expression, text
from engine.analysis.source.evaluator import _BINARY, Env, Evaluator, Pointer, Undefined, Unknown, Value

LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_COMPOUND = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%", "<<=": "<<", ">>=": ">>", "&=": "&",
             "|=": "|", "^=": "^"}


@dataclass(frozen=True)
class Context:
    loop_depth: int = 0


Visitor = Callable[[Node, Env, Context], None]
# Which arm of an `if` runs for every thread, when the caller can tell: 0 the consequence, 1 the
# alternative, None both (the default model).
Decider = Callable[[Node, Env], int | None]


def _declarator_name(node: Node) -> tuple[str, bool, list[Node]]:
    """(name, is_pointer, array extents) of a declarator."""
    pointer, extents = False, []
    while node is not None and node.type in ("pointer_declarator", "array_declarator", "reference_declarator",
                                             "init_declarator", "parenthesized_declarator", "function_declarator"):
        if node.type == "pointer_declarator":
            pointer = True
        if node.type == "array_declarator":
            size = node.child_by_field_name("size")
            extents.insert(0, size)
        node = node.child_by_field_name("declarator") or next((c for c in node.children if c.is_named), None)
    return text(node), pointer, extents


def _roots(exc: Unknown, env: Env, declared: str | None = None) -> tuple[str, ...]:
    """The variables to ask for when a declaration's value is unknown: those of its value that are
    themselves declared but unknown; else the declared name itself (`int n = atoi(argv[1]);` asks for
    `n`, not `argv`)."""
    roots = []
    for name in exc.names:
        try:
            env.lookup(name)
        except KeyError:
            continue
        roots.append(name)
    return tuple(roots) or ((declared,) if declared else exc.names)


class Interpreter:
    """`pinned`: names whose values the caller fixes (sizes given on the command line); a declaration
    or an assignment of one keeps the given value, so `int n = atoi(argv[1]);` reads as the size asked for."""

    def __init__(self, evaluator: Evaluator, visit: Visitor, shared_space: str = "shared",
                 decide: Decider | None = None, pinned: dict[str, Value] | None = None) -> None:
        self.ev = evaluator
        self.visit = visit
        self.shared_space = shared_space
        self.decide = decide
        self.pinned = pinned or {}

    def run(self, body: Node, env: Env, ctx: Context | None = None) -> None:
        """`ctx`: where the body runs (a helper called inside a loop starts at that loop's depth)."""
        self.statement(body, env, ctx or Context())

    # -- statements ------------------------------------------------------------------------------
    def statement(self, node: Node, env: Env, ctx: Context) -> None:
        kind = node.type
        if kind == "compound_statement":
            inner = env.child()
            for child in node.children:
                if child.is_named:
                    self.statement(child, inner, ctx)
        elif kind == "declaration":
            self.declaration(node, env, ctx)
        elif kind == "expression_statement":
            for child in node.children:
                if child.is_named:
                    self.visit(child, env, ctx)
                    self.effects(child, env)
        elif kind == "for_statement":
            scope = env.child()
            init = node.child_by_field_name("initializer")
            if init is not None:
                if init.type == "declaration":
                    self.declaration(init, scope, ctx)
                else:
                    self.visit(init, scope, ctx)
                    self.effects(init, scope)
            inner = Context(ctx.loop_depth + 1)
            for field_name in ("condition", "update"):
                part = node.child_by_field_name(field_name)
                if part is not None:
                    self.visit(part, scope, inner)
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, scope, inner)
        elif kind in ("while_statement", "do_statement"):
            inner = Context(ctx.loop_depth + 1)
            condition = node.child_by_field_name("condition")
            if condition is not None:
                self.visit(condition, env, inner)
            body = node.child_by_field_name("body")
            if body is not None:
                self.statement(body, env.child(), inner)
        elif kind == "if_statement":
            condition = node.child_by_field_name("condition")
            arm = None
            if condition is not None:
                self.visit(condition, env, ctx)
                arm = self.decide(condition, env) if self.decide is not None else None
            for index, field_name in enumerate(("consequence", "alternative")):
                branch = node.child_by_field_name(field_name)
                if branch is not None and arm in (None, index):
                    self.statement(branch, env.child(), ctx)
        elif kind == "else_clause":
            for child in node.children:
                if child.is_named:
                    self.statement(child, env.child(), ctx)
        elif kind in ("switch_statement", "case_statement", "labeled_statement"):
            for child in node.children:
                if child.is_named and child.type not in ("condition_clause",):
                    self.statement(child, env, ctx)
                elif child.type == "condition_clause":
                    self.visit(child, env, ctx)
        elif kind in ("return_statement", "condition_clause"):
            self.visit(node, env, ctx)
        elif kind in ("comment", "preproc_call", "break_statement", "continue_statement", "goto_statement"):
            return
        elif node.is_named:
            self.visit(node, env, ctx)

    def declaration(self, node: Node, env: Env, ctx: Context) -> None:
        qualifiers = {text(c) for c in node.children if c.type in ("type_qualifier", "storage_class_specifier")}
        type_node = node.child_by_field_name("type")
        type_name = text(type_node)
        shared = "__shared__" in qualifiers
        for declarator in node.children_by_field_name("declarator"):
            name, is_pointer, extents = _declarator_name(declarator)
            value_node = declarator.child_by_field_name("value") if declarator.type == "init_declarator" else None
            if value_node is not None:
                self.visit(value_node, env, ctx)
            if shared or extents:
                dims: list[int | None] = []
                for extent in extents:
                    try:
                        dims.append(None if extent is None else int(self.ev.vector(extent, env)[0]))
                    except Unknown:
                        dims.append(None)
                space = self.shared_space if shared else "local"
                env.define(name, Pointer(name, space, self.ev.elem_bytes_of(type_name),
                                         self.ev.const(0), tuple(dims) if dims != [None] else (), type_name))
                continue
            if name in self.pinned and not is_pointer:
                env.define(name, self.pinned[name])
                continue
            if type_name == "dim3":
                env.define(name, self._dim3(declarator, env))
                continue
            if value_node is None:
                env.define(name, Undefined(f"`{name}` is declared without a value", (name,)))
                continue
            env.define(name, self._value(value_node, env, is_pointer, type_name, name))

    def _value(self, node: Node, env: Env, is_pointer: bool, type_name: str, name: str):
        if is_pointer:
            try:
                pointer = self.ev.pointer(node, env)
            except Unknown as exc:
                return Undefined(str(exc))
            if pointer is not None:
                declared = type_name.replace("const", "").strip()
                if declared and declared != pointer.type_name and declared not in ("auto",):
                    return pointer.with_type(declared, self.ev.elem_bytes_of(declared))
                return pointer
            return Undefined(f"`{name}` points to memory the analysis does not follow")
        try:
            value = self.ev.value(node, env)
        except Unknown as exc:
            return Undefined(str(exc), _roots(exc, env, name))
        if isinstance(value, Undefined) and not value.names:
            return Undefined(value.reason, (name,))
        if isinstance(value, np.ndarray) and any(t in type_name for t in ("int", "long", "size_t", "short")) \
                and value.dtype.kind == "f":
            value = np.trunc(value).astype(np.int64)
        return value

    def _dim3(self, declarator: Node, env: Env):
        """`dim3 g(a, b)`, `dim3 g{a, b}`, `dim3 g = dim3(a)` or `dim3 g = n` as a (x, y, z) value."""
        one = self.ev.const(1)
        if declarator.type == "function_declarator":  # `dim3 grid(a, b);` parses as a declaration
            params = declarator.child_by_field_name("parameters")
            arg_nodes = [parse_expression(text(c)) for c in params.children if c.is_named] if params else []
        elif declarator.type == "init_declarator":
            value = declarator.child_by_field_name("value")
            if value is None:
                arg_nodes = []
            elif value.type in ("argument_list", "initializer_list"):
                arg_nodes = [c for c in value.children if c.is_named]
            else:
                try:
                    result = self.ev.value(value, env)
                except Unknown as exc:
                    return Undefined(str(exc), _roots(exc, env))
                return (result, one, one) if isinstance(result, np.ndarray) else result
        else:
            return (one, one, one)
        values = []
        for arg in arg_nodes[:3]:
            if arg is None:
                return Undefined("a dim3 argument could not be parsed")
            try:
                values.append(self.ev.vector(arg, env))
            except Unknown as exc:
                return Undefined(str(exc), _roots(exc, env))
        return tuple(values + [one] * (3 - len(values)))

    # -- side effects ----------------------------------------------------------------------------
    def effects(self, node: Node, env: Env) -> None:
        """Apply the assignments of an expression statement to the local names."""
        if node.type == "comma_expression":
            for child in node.children:
                if child.is_named:
                    self.effects(child, env)
            return
        if node.type == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            op = text(node.child_by_field_name("operator"))
            if left.type != "identifier":
                return
            name = text(left)
            try:
                current = env.lookup(name)
            except KeyError:
                return
            if name in self.pinned:
                return
            if isinstance(current, Undefined) and op == "=":  # `const float *p; ... p = a + i;`
                try:
                    pointer = self.ev.pointer(right, env)
                except Unknown:
                    pointer = None
                if pointer is not None:
                    env.assign(name, pointer)
                    return
            if isinstance(current, Pointer):
                try:
                    pointer = self.ev.pointer(right, env) if op == "=" else None
                except Unknown:
                    pointer = None
                if op in ("+=", "-=") and current.space:
                    try:
                        step = self.ev.vector(right, env) * current.elem_bytes
                        pointer = current.moved(current.offset + (step if op == "+=" else -step))
                    except Unknown:
                        pointer = None
                env.assign(name, pointer or Undefined(f"`{name}` is re-pointed in a way not followed"))
                return
            try:
                value = self.ev.vector(right, env)
                if op != "=":
                    value = _BINARY[_COMPOUND[op]](self.ev.vector(left, env), value)
                env.assign(name, value)
            except (Unknown, KeyError) as exc:
                env.assign(name, Undefined(f"`{name}` is updated from a value not known statically ({exc})", (name,)))
        elif node.type == "update_expression":
            argument = node.child_by_field_name("argument")
            if argument is not None and argument.type == "identifier":
                name = text(argument)
                try:
                    current = env.lookup(name)
                except KeyError:
                    return
                step = 1 if "++" in text(node) else -1
                if isinstance(current, np.ndarray):
                    env.assign(name, current + step)
                elif isinstance(current, Pointer) and current.space:
                    env.assign(name, current.moved(current.offset + step * current.elem_bytes))
