"""Where a function of the parsed program stands in the program's own text (the bundle of its files).

The generated reference keeps the user's text as written, so it is cut from the bundle rather than printed
from the syntax tree: pycparser says on which line of which file each function's name and body begin;
the definition starts at the line of its return type (`static` on a line of its own, as PolyBench writes
it, included) and ends at the brace that closes its body.
"""

from __future__ import annotations

import re

from pycparser import c_ast

LINE_MARKER = re.compile(r'^#line\s+(\d+)\s+"([^"]*)"')
WORD = re.compile(r"[A-Za-z_]\w*\**|\*+")


def _specifiers_only(line: str) -> bool:
    """A line of nothing but words (`static`, `inline void`): the start of the definition below it."""
    words = line.split()
    return bool(words) and all(WORD.fullmatch(w) for w in words)


class Layout:
    """The bundle's lines, and which line of which file each one is."""

    def __init__(self, bundle: str) -> None:
        self.lines = bundle.splitlines()
        self.index: dict[tuple[str, int], int] = {}
        current, number = "", 1
        for i, line in enumerate(self.lines):
            match = LINE_MARKER.match(line)
            if match:
                current, number = match.group(2), int(match.group(1))
                continue
            self.index.setdefault((current, number), i)
            number += 1

    def at(self, coord) -> int:
        key = (coord.file, coord.line)
        if key not in self.index:
            raise KeyError(f"no line {coord.line} of {coord.file} in the program's text")
        return self.index[key]

    def function_span(self, function: c_ast.FuncDef) -> tuple[int, int]:
        """(first line, last line) of a function's definition, both included."""
        start = self.at(function.decl.coord)
        while start > 0 and _specifiers_only(self.lines[start - 1]):
            start -= 1
        body = self.at(function.body.coord)
        return start, self._closing(body, function.body.coord.column - 1)

    def _closing(self, line: int, column: int) -> int:
        depth, i, j = 0, line, column
        in_block = False
        while i < len(self.lines):
            text = self.lines[i]
            while j < len(text):
                two = text[j:j + 2]
                if in_block:
                    if two == "*/":
                        in_block, j = False, j + 2
                        continue
                    j += 1
                    continue
                if two == "/*":
                    in_block, j = True, j + 2
                    continue
                if two == "//":
                    break
                char = text[j]
                if char in "\"'":
                    j = self._skip_literal(text, j)
                    continue
                if char == "{":
                    depth += 1
                elif char == "}":
                    depth -= 1
                    if depth == 0:
                        return i
                j += 1
            i, j = i + 1, 0
        raise ValueError("unbalanced braces")

    @staticmethod
    def _skip_literal(text: str, j: int) -> int:
        quote, j = text[j], j + 1
        while j < len(text) and text[j] != quote:
            j += 2 if text[j] == "\\" else 1
        return j + 1
