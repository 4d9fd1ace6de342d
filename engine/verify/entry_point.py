"""Whether a candidate can be what its problem asks for at all, read from its text before anything is
built: a PyTorch problem's candidate is a Python module that defines `ModelNew`, a C problem's candidate
defines the problem's entry point. Said in the same words wherever a candidate arrives (a paste into a
run, `refinery verify`, a proposal), so a candidate that cannot load is never reported as "needs a GPU".
"""

from __future__ import annotations

import re

from engine.wire.parsing import parse as parse_python


def missing_entry(kind: str, source: str, entry: str | None = None, *, parse: bool = True) -> str | None:
    """Why this source cannot be a candidate of a problem of `kind`, or None when it may be one; `parse`
    also asks a Python module to parse (the verifier leaves that to its compile step)."""
    if not source.strip():
        return "the candidate is empty"
    if kind == "pytorch":
        try:
            if parse:
                parse_python(source)
        except SyntaxError as exc:
            return f"the module does not parse: {exc.msg} (line {exc.lineno})"
        if not re.search(r"\bModelNew\b", source):
            return "the module defines no class ModelNew"
        return None
    if entry and not re.search(rf"\b{re.escape(entry)}\b", source):
        return f"the source defines no function {entry} (the problem's entry point)"
    return None
