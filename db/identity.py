"""What makes two stored candidates the same code: their sources equal once comments and whitespace are
gone (a re-run of the same setting, a reformatted copy). Stored candidates keep their own rows; anything
that pairs them (measured pairs, the label queue, exports) treats one equivalence class as one candidate.
Standard library only."""

from __future__ import annotations

import hashlib
import io
import re
import tokenize

_C_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_SKIPPED = (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER)
_MARKS = {tokenize.NEWLINE: ";", tokenize.INDENT: "{", tokenize.DEDENT: "}"}  # block structure is code


def normalized_source(source: str, language: str) -> str:
    """The code's tokens without comments and with whitespace collapsed (Python keeps its block structure)."""
    if language == "python":
        try:
            return " ".join(_MARKS.get(t.type, t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
                            if t.type not in _SKIPPED)
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
    return " ".join(_C_COMMENTS.sub(" ", source).split())


def equivalence_key(source: str, language: str) -> str:
    return hashlib.sha256(normalized_source(source, language).encode()).hexdigest()[:16]


_KNOWN: dict[tuple[str, str], str] = {}
_KNOWN_MAX = 200_000


def equivalence_of(source_hash: str, source: str, language: str) -> str:
    """`equivalence_key`, remembered by the stored source hash: the label queue asks for every candidate's
    class on every pair it draws, and tokenising thousands of sources each time would be seconds."""
    if not source_hash:
        return equivalence_key(source, language)
    known = _KNOWN.get((source_hash, language))
    if known is None:
        if len(_KNOWN) >= _KNOWN_MAX:
            _KNOWN.clear()
        known = _KNOWN[(source_hash, language)] = equivalence_key(source, language)
    return known
