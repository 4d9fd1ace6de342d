"""`ast.parse` behind one lock, for the whole engine: the one implementation lives beside the code
both sides of the sandbox share (`engine.wire.parsing`), so there is one lock, not two."""

from __future__ import annotations

from engine.wire.parsing import parse

__all__ = ["parse"]
