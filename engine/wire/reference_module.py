"""Executes a KernelBench-format file as a module with one configuration's sizes in its globals.

Used by the probe and by the GPU worker, so it imports nothing beyond the standard library.
"""

from __future__ import annotations

import ast
import types

from engine.wire.parsing import parse


def _value_node(value) -> ast.expr:
    if value is None or isinstance(value, bool | int | float | str):
        if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
            return parse(f"float({str(value)!r})", mode="eval").body
        return ast.Constant(value)
    return parse(repr(value), mode="eval").body


def _assigned_names(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    return []


def with_sizes(source: str, params: dict, filename: str = "reference.py") -> ast.Module:
    """The file's syntax tree with each top-level assignment of a configured name followed by one that
    sets the configuration's value.

    Sizes computed from others at load time (`input_shape = (batch_size, 3, 224, 224)`, `dim = N * 2`)
    then follow the configured value, as they would had the user written it in the file.
    """
    tree = parse(source, filename=filename)
    body: list[ast.stmt] = []
    for node in tree.body:
        body.append(node)
        for name in _assigned_names(node):
            if name in params:
                body.append(ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())],
                                                         value=_value_node(params[name])), node))
    tree.body = body
    return ast.fix_missing_locations(tree)


def load_module(source: str, params: dict, filename: str = "reference.py", name: str = "reference"):
    """Run `source` as a fresh module at the sizes in `params`.

    A configured name is set where the file assigns it, so what the file computes from it follows; it is
    also set after execution, for a name the file never assigns at top level (get_inputs() and
    get_init_inputs() read the module globals at call time).
    """
    module = types.ModuleType(name)
    module.__file__ = filename
    code = compile(with_sizes(source, params, filename) if params else source, filename, "exec")
    exec(code, module.__dict__)  # noqa: S102 - runs only in probes/workers
    module.__dict__.update(params)
    return module
