"""Finds the CUDA C++ inside a Python candidate, so it can be compiled and analysed without running it.

A string constant that contains `__global__` is CUDA source: that covers CuPy's RawKernel/RawModule
code strings and `load_inline(cuda_sources=...)`. Strings built at run time (f-strings with
holes) are returned with a note, since their final text is only known when the module runs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from engine import python_ast


@dataclass(frozen=True)
class ExtractedSources:
    sources: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    uses_load_inline: bool = False


def _constant_strings(tree: ast.AST) -> list[str]:
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value.value
    found = [node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)]
    return found + list(names.values())


def cuda_sources_from_python(source: str) -> ExtractedSources:
    """Every distinct CUDA source string in a Python candidate, in order of appearance."""
    try:
        tree = python_ast.parse(source)
    except SyntaxError as exc:
        return ExtractedSources((), (f"Python syntax error at line {exc.lineno}: {exc.msg}",))
    seen: dict[str, None] = {}
    for text in _constant_strings(tree):
        if "__global__" in text:
            seen.setdefault(text, None)
    notes = []
    uses_load_inline = any(isinstance(n, ast.Name | ast.Attribute) and getattr(n, "id", getattr(n, "attr", ""))
                           == "load_inline" for n in ast.walk(tree))
    if any(isinstance(n, ast.JoinedStr) and "__global__" in ast.unparse(n) for n in ast.walk(tree)):
        notes.append("some CUDA source is an f-string; its run-time text may differ from what was analysed")
    if not seen:
        notes.append("no CUDA source (a string containing __global__) found")
    return ExtractedSources(tuple(seen), tuple(notes), uses_load_inline)


_KERNEL_NAME = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?(?:inline\s+)?void\s+"
                          r"(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)")


def kernel_names(cuda_source: str) -> tuple[str, ...]:
    """Names of the `__global__` functions a CUDA source defines: the profiler attributes kernels by them."""
    return tuple(dict.fromkeys(_KERNEL_NAME.findall(cuda_source)))
