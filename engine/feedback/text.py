"""Small wording helpers shared by the tools, so numbers read the same in every finding (bytes are worded by
`engine.analysis.fmt_bytes`, as the static report words them)."""

from __future__ import annotations


def fmt_pct(value: float) -> str:
    return f"{value:.0%}"


def code(expression: str) -> str:
    return "`" + expression.replace("`", "'") + "`"
