"""C size expressions turned into the configuration expressions problem.toml holds (`M * N`), read safely.

An array's extent in C (`n + 0`, `NI * sizeof(double) / sizeof(double)`, a variable of main's) becomes an
expression over the configuration's parameters, or None when it depends on something a configuration does
not set (a value read at run time), which the importer then asks the user for.
"""

from __future__ import annotations

from collections.abc import Callable

from pycparser import c_ast

from engine.problem_import.cimport.ctype import BYTES, resolve_names

_OPS = {"+": "+", "-": "-", "*": "*", "/": "//", "%": "%", "<<": "<<", ">>": ">>"}
_PRECEDENCE = {"<<": 1, ">>": 1, "+": 2, "-": 2, "*": 3, "//": 3, "%": 3}


def int_literal(text: str) -> int | None:
    text = text.rstrip("uUlL")
    try:
        return int(text, 0) if not (text.startswith("0") and text[1:].isdigit()) else int(text, 8)
    except ValueError:
        return None


def _sizeof(node: c_ast.Node, typedefs: dict) -> int | None:
    target = node.expr
    if isinstance(target, c_ast.Typename) and isinstance(target.type, c_ast.TypeDecl) \
            and isinstance(target.type.type, c_ast.IdentifierType):
        base, _ = resolve_names(target.type.type.names, typedefs)
        return BYTES.get(base)
    return None


def size_expression(node: c_ast.Node, name_of: Callable[[str], tuple[str, int] | None],
                    typedefs: dict | None = None) -> tuple[str, int] | None:
    """(expression text, precedence) of an integer C expression, identifiers mapped by `name_of`; None where
    it cannot be said over the parameters."""
    typedefs = typedefs or {}
    if isinstance(node, c_ast.Constant):
        value = int_literal(node.value) if node.type in ("int", "unsigned int", "long int", "long long int",
                                                         "unsigned long int", "unsigned long long int") else None
        return (str(value), 9) if value is not None else None
    if isinstance(node, c_ast.ID):
        return name_of(node.name)
    if isinstance(node, c_ast.Cast):
        return size_expression(node.expr, name_of, typedefs)
    if isinstance(node, c_ast.UnaryOp):
        if node.op == "sizeof":
            value = _sizeof(node, typedefs)
            return (str(value), 9) if value is not None else None
        inner = size_expression(node.expr, name_of, typedefs)
        if inner is None or node.op not in ("-", "+"):
            return None
        return (f"{node.op}{_wrap(inner, 8)}", 8)
    if isinstance(node, c_ast.BinaryOp) and node.op in _OPS:
        left, right = size_expression(node.left, name_of, typedefs), size_expression(node.right, name_of, typedefs)
        if left is None or right is None:
            return None
        op = _OPS[node.op]
        if op in ("+", "-") and right[0] == "0":
            return left
        if op == "*" and right[0] == "1":
            return left
        if op == "*" and left[0] == "1":
            return right
        level = _PRECEDENCE[op]
        return f"{_wrap(left, level)} {op} {_wrap(right, level + (op in ('-', '//', '%')))}", level
    return None


def _wrap(part: tuple[str, int], level: int) -> str:
    return part[0] if part[1] >= level else f"({part[0]})"


def product(parts: list[str]) -> str:
    """`a * b * c`, each factor bracketed where it needs it."""
    wrapped = [p if p.replace("_", "").isalnum() else f"({p})" for p in parts]
    return " * ".join(wrapped) if wrapped else "1"
