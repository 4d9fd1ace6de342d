"""Small wording helpers shared by the tools, so numbers read the same in every finding."""

from __future__ import annotations


def fmt_bytes(value: float) -> str:
    value = abs(value)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            scaled = value / size
            return f"{scaled:.0f} {unit}" if scaled >= 10 or scaled == int(scaled) else f"{scaled:.1f} {unit}"
    return f"{value:.0f} bytes"


def fmt_pct(value: float) -> str:
    return f"{value:.0%}"


def code(expression: str) -> str:
    return "`" + expression.replace("`", "'") + "`"
