"""Source and diff views highlighted by Pygments, so CUDA, C and Python read the same everywhere.

Pygments renders to inline-styled HTML (no stylesheet to ship); `st.html` keeps inline styles and
runs no script. The HTML functions are pure and tested; `show_*` put them on the page.
"""

from __future__ import annotations

import difflib
import html

import streamlit as st
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import CLexer, CudaLexer, DiffLexer, PythonLexer, TextLexer

from app.components.style import CODE_STYLE

LEXERS: dict[str, type[Lexer]] = {"python": PythonLexer, "pytorch": PythonLexer, "cuda": CudaLexer, "c": CLexer,
                                  "diff": DiffLexer}
_FRAME = ('<div class="kr-code" style="max-height:{height}px;overflow:auto;border-radius:8px;'
          'font-size:12.5px;line-height:1.45;border:1px solid #1f2933">{body}</div>')

# Long lines wrap inside the pane (a side-by-side pane is narrow, and a scroll bar hidden by the system reads
# as code cut off); a word longer than the pane breaks rather than running out of it.
PRE_STYLE = "margin:0;padding:12px 14px;white-space:pre-wrap;overflow-wrap:anywhere;"


def language_of(language: str | None, source: str = "") -> str:
    """Our language tag for a source: the stored one, else a guess from CUDA's telltale words."""
    if language in LEXERS:
        return language
    if "__global__" in source:
        return "cuda"
    if "#include" in source:
        return "c"
    return "python"


def highlight_html(source: str, language: str | None, line_numbers: bool = True, height: int = 520) -> str:
    lexer = LEXERS.get(language_of(language, source), TextLexer)()
    formatter = HtmlFormatter(noclasses=True, style=CODE_STYLE, linenos="inline" if line_numbers else False,
                              nobackground=False, prestyles=PRE_STYLE)
    return _FRAME.format(height=height, body=highlight(source or "", lexer, formatter))


def unified_diff(old: str, new: str, old_name: str = "parent", new_name: str = "candidate",
                 context: int = 3) -> str:
    return "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name,
                                          lineterm="", n=context))


def diff_stats(diff: str) -> tuple[int, int]:
    """(lines added, lines removed) of a unified diff, headers excluded."""
    added = sum(1 for ln in diff.splitlines() if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---"))
    return added, removed


def diff_html(diff: str, height: int = 520) -> str:
    formatter = HtmlFormatter(noclasses=True, style=CODE_STYLE, prestyles=PRE_STYLE)
    return _FRAME.format(height=height, body=highlight(diff, DiffLexer(), formatter))


def show_code(source: str, language: str | None, height: int = 520) -> None:
    st.html(highlight_html(source, language, height=height))


def show_diff(parent_source: str | None, source: str, parent_label: str, label: str) -> None:
    """The candidate against its parent; says so in words when there is no parent or no change."""
    if parent_source is None:
        st.caption("This candidate is a root of the search tree: there is no parent to compare with.")
        return
    diff = unified_diff(parent_source, source, parent_label, label)
    if not diff:
        st.caption("Same source as its parent (a re-measure, or a proposal that changed nothing).")
        return
    added, removed = diff_stats(diff)
    st.caption(f"{added} line(s) added, {removed} removed against {html.escape(parent_label)}.")
    st.html(diff_html(diff))
