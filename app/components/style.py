"""One look for every page: verdict colours and words, status badges, number formats.

Colours that Streamlit's theme cannot carry (chart scales, verdict badges) live here and nowhere
else, so a verdict is the same colour in the round list, the roofline and the search tree.
The app-wide palette and fonts are in `assets/theme/refinery.toml`.
"""

from __future__ import annotations

import math

import streamlit as st

CODE_STYLE = "github-dark"
PRIMARY = "#0e7c86"

VERDICT_ORDER = ("correct", "needs_gpu", "incorrect", "integrity_violation", "runtime_error", "timeout",
                 "load_error", "compile_error", "proposal_error", "pending")
VERDICT_COLORS = {
    "correct": "#1a9e63",
    "needs_gpu": "#6f8fb8",
    "incorrect": "#e08a2b",
    "integrity_violation": "#8e44c9",
    "runtime_error": "#d64550",
    "timeout": "#b86b2a",
    "load_error": "#c2577a",
    "compile_error": "#8a1c2b",
    "proposal_error": "#7a6a58",
    "pending": "#aab4be",
}
VERDICT_WORDS = {
    "correct": "correct",
    "needs_gpu": "needs a GPU",
    "incorrect": "incorrect",
    "integrity_violation": "integrity violation",
    "runtime_error": "runtime error",
    "timeout": "timeout",
    "load_error": "load error",
    "compile_error": "compile error",
    "proposal_error": "no candidate",
    "pending": "being evaluated",
}
_VERDICT_BADGE = {"correct": "green", "needs_gpu": "blue", "incorrect": "orange", "integrity_violation": "violet",
                  "timeout": "orange", "proposal_error": "gray", "pending": "gray"}
_VERDICT_ICON = {"correct": ":material/check_circle:", "needs_gpu": ":material/memory:",
                 "incorrect": ":material/rule:", "integrity_violation": ":material/gpp_bad:",
                 "timeout": ":material/timer_off:", "proposal_error": ":material/block:",
                 "pending": ":material/hourglass_top:"}
_STATUS_BADGE = {"queued": "gray", "running": "blue", "paused": "orange", "stopped": "gray", "finished": "green",
                 "failed": "red"}
_STATUS_ICON = {"queued": ":material/schedule:", "running": ":material/play_circle:",
                "paused": ":material/pause_circle:", "stopped": ":material/stop_circle:",
                "finished": ":material/task_alt:", "failed": ":material/error:"}
RECORDED_WORDS = "recorded on a GPU"


def verdict_key(verdict: str | None) -> str:
    return verdict if verdict in VERDICT_COLORS else "pending"


def verdict_words(verdict: str | None) -> str:
    return VERDICT_WORDS.get(verdict_key(verdict), str(verdict))


def verdict_badge(verdict: str | None) -> None:
    key = verdict_key(verdict)
    st.badge(verdict_words(key), color=_VERDICT_BADGE.get(key, "red"), icon=_VERDICT_ICON.get(key, ":material/error:"))


def verdict_markdown(verdict: str | None) -> str:
    """A coloured badge inside markdown text (round lists, where st.badge would add a row each)."""
    key = verdict_key(verdict)
    return f":{_VERDICT_BADGE.get(key, 'red')}-badge[{verdict_words(key)}]"


def status_badge(status: str) -> None:
    st.badge(status, color=_STATUS_BADGE.get(status, "gray"), icon=_STATUS_ICON.get(status))


def status_markdown(status: str) -> str:
    return f":{_STATUS_BADGE.get(status, 'gray')}-badge[{status}]"


def recorded_badge() -> None:
    st.badge(RECORDED_WORDS, color="violet", icon=":material/videocam:",
             help="Shipped with the app: measured on a real GPU with `refinery run`, stored read-only.")


def fmt_speedup(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.2f}×" if value < 100 else f"{value:.0f}×"


def fmt_us(value: float | None) -> str:
    """A time in three significant figures at most ("1.58 ms", not "1578.0 µs"): short enough for a metric
    in a narrow column, where a longer value is cut."""
    if value is None or not math.isfinite(value):
        return "–"
    for scale, unit in ((1e6, "s"), (1e3, "ms")):
        if abs(value) >= scale:
            return f"{_three_figures(value / scale)} {unit}"
    return f"{_three_figures(value)} µs"


def _three_figures(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


P_FLOOR = 1e-16  # below this a p-value says only "certain"; a float64 tail probability even rounds to 0.0


def fmt_p_value(value: float | None) -> str:
    """A p-value that never reads as 0: tiny ones as "< 1e-16", small ones in scientific notation."""
    if value is None or not math.isfinite(value):
        return "–"
    if value < P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    return f"{value:.2e}" if value < 1e-3 else f"{value:.3f}"


def fmt_number(value: object) -> str:
    """Numbers for diagnostic tables: short, with SI prefixes for big ones."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if not math.isfinite(value):
        return str(value)
    magnitude = abs(value)
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e4, "k")):
        if magnitude >= limit:
            return f"{value / limit:.3g}{suffix}"
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.3g}"
