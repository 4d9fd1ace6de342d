"""The size constants at the top of a KernelBench file, read without running it.

A configuration sets the sizes the file writes as plain numbers or arithmetic on numbers
(`N = 2048 * 2`); a size computed from others (`dim = N * 2`, `input_shape = (batch_size, 3, 224, 224)`)
is left to the file, which recomputes it when the module loads at the configured sizes
(`engine.wire.reference_module`). Only literal arithmetic is evaluated, with simpleeval: a call,
an attribute or an unknown name makes a statement unreadable, and what depends on it too.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from engine import python_ast
from engine.problems.expressions import ExpressionError, evaluate_value

BATCH_NAMES = ("batch_size", "batch", "bs", "B", "b", "N", "n", "M", "num_samples")


@dataclass(frozen=True)
class ModuleSizes:
    """Every top-level number the file computes, and which of them a configuration may set."""

    values: dict[str, int | float] = field(default_factory=dict)  # as the file computes them
    settable: tuple[str, ...] = ()  # written as arithmetic on numbers only, in file order
    depends_on: dict[str, tuple[str, ...]] = field(default_factory=dict)  # computed ones: the names they read

    @property
    def params(self) -> dict[str, int | float]:
        """The file's own configuration: its settable sizes as written."""
        return {name: self.values[name] for name in self.settable}

    @property
    def batch_name(self) -> str | None:
        """The settable integer that reads as a batch (the first of BATCH_NAMES present), if any."""
        return next((n for n in BATCH_NAMES if n in self.settable and _is_int(self.values[n])), None)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _targets(node: ast.stmt) -> tuple[list[str], ast.expr | None]:
    if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
        return [t.id for t in node.targets], node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id], node.value
    return [], None


def read_sizes(source: str, filename: str = "reference.py") -> ModuleSizes:
    """The sizes of a KernelBench file (raises SyntaxError as `ast` does)."""
    tree = python_ast.parse(source, filename=filename)
    known: dict[str, object] = {}  # every readable top-level value, numbers and tuples alike
    settable: dict[str, bool] = {}
    depends: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        names, value_node = _targets(node)
        if not names:
            continue
        reads = tuple(dict.fromkeys(n.id for n in ast.walk(value_node) if isinstance(n, ast.Name)))
        try:
            value = evaluate_value(ast.unparse(value_node), {n: known[n] for n in reads if n in known})
        except ExpressionError:
            value = None
        for name in names:
            settable.pop(name, None)
            depends.pop(name, None)
            known.pop(name, None)
            if value is None or not _readable(value):
                continue
            known[name] = value
            if _is_number(value):
                settable[name] = not reads
                if reads:
                    depends[name] = reads
    values = {n: v for n, v in known.items() if _is_number(v)}
    return ModuleSizes(values=values, settable=tuple(n for n, s in settable.items() if s), depends_on=depends)


def _readable(value) -> bool:
    if _is_number(value) or isinstance(value, bool):
        return True
    return isinstance(value, tuple | list) and all(_readable(v) for v in value)
