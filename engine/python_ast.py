"""`ast.parse` behind one lock.

CPython 3.11 converts a parsed module to Python objects with a recursion counter that threads
share, so two `ast.parse` calls at once can fail with "SystemError: AST constructor recursion
depth mismatch". Builds and analyses run in threads, so every parse in the engine goes through here.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    with _LOCK:
        return ast.parse(source, filename=filename)
