"""Finds the candidate in an LLM reply, or says precisely why there is none."""

from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+\-]*)[^\n]*\n(.*?)```", re.S)
LANGUAGE_ALIASES = {"py": "python", "python": "python", "cuda": "cuda", "cu": "cuda", "cpp": "cuda", "c++": "cuda",
                    "c": "c", "": ""}


@dataclass(frozen=True)
class ParsedReply:
    source: str | None
    language: str | None
    error: str | None = None


def _defines_candidate(block: str, problem_kind: str, entry: str | None) -> bool:
    if problem_kind == "pytorch":
        return "class ModelNew" in block
    return bool(entry) and re.search(rf"\b{re.escape(entry)}\s*\(", block) is not None


def parse_reply(reply: str, problem_kind: str, entry: str | None = None, truncated: bool = False) -> ParsedReply:
    """The one code block that is the candidate; errors for no code, truncation or ambiguity."""
    blocks = [(LANGUAGE_ALIASES.get(lang.lower(), lang.lower()), body) for lang, body in FENCE.findall(reply)]
    if truncated or reply.count("```") % 2 == 1:
        return ParsedReply(None, None, "the reply was cut off before its code block ended (truncated)")
    if not blocks:
        return ParsedReply(None, None, "the reply contains no code block")
    candidates = [(lang, body) for lang, body in blocks if _defines_candidate(body, problem_kind, entry)]
    wanted = "class ModelNew" if problem_kind == "pytorch" else f"the entry point {entry}()"
    if not candidates:
        return ParsedReply(None, None, f"{len(blocks)} code block(s), none defines {wanted}")
    if len(candidates) > 1 and len({body.strip() for _, body in candidates}) > 1:
        return ParsedReply(None, None, f"{len(candidates)} different code blocks define {wanted}; expected one")
    lang, body = candidates[-1]
    if problem_kind == "pytorch":
        language = "python"
    else:
        language = "cuda" if "__global__" in body or lang == "cuda" else "c"
    return ParsedReply(body.strip() + "\n", language)
