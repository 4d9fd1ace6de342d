"""A candidate typed or pasted by a person in the dashboard (or given to `refinery verify`)."""

from __future__ import annotations

import hashlib

from engine.propose.base import Proposal


def human_proposal(source: str, language: str, author: str | None = None, note: str = "") -> Proposal:
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    return Proposal(source=source, language=language, origin="human", signature=f"human:{digest}",
                    meta={"author": author, "note": note})
