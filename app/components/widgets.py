"""Small widgets every page uses the same way: the pager, the empty-state note."""

from __future__ import annotations

import math

import streamlit as st


def pager(total: int, page_size: int, key: str, noun: str = "rows") -> int:
    """A zero-based page number; shows "page x of y" only when there is more than one page."""
    pages = max(1, math.ceil(total / max(1, page_size)))
    if pages == 1:
        st.session_state.pop(key, None)
        return 0
    st.session_state[key] = min(max(1, int(st.session_state.get(key, 1))), pages)
    left, right = st.columns([1, 3], vertical_alignment="center")
    number = left.number_input("Page", min_value=1, max_value=pages, step=1, key=key, label_visibility="collapsed")
    right.caption(f"Page {number} of {pages} · {total:,} {noun}")
    return int(number) - 1


def empty_state(text: str, icon: str = ":material/inbox:") -> None:
    st.info(text, icon=icon)
