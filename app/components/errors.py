"""Errors shown where the user is looking, in words; the traceback only behind a closed expander.

Streamlit's own control-flow exceptions (rerun, stop, page switch) pass through untouched.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner_utils.exceptions import ScriptControlException

log = logging.getLogger("kernel_refinery.app")


def describe(exc: BaseException) -> str:
    """A sentence for the user: the exception's own message, or its kind when it has none."""
    text = str(exc).strip()
    if isinstance(exc, KeyError) and exc.args:
        text = str(exc.args[0])
    return text or type(exc).__name__.replace("Error", " error").strip()


def show_error(action: str, exc: BaseException) -> None:
    """`Could not <action>: <why>.` plus the technical details for a bug report, folded away."""
    log.warning("could not %s", action, exc_info=exc)
    st.error(f"Could not {action}: {describe(exc)}", icon=":material/error:")
    with st.expander("Technical details", expanded=False):
        st.code("".join(traceback.format_exception(exc)), language="text")


@contextmanager
def shown_errors(action: str) -> Iterator[None]:
    """Run a block; if it raises, say what failed at this spot on the page and carry on."""
    try:
        yield
    except ScriptControlException:
        raise
    except Exception as exc:  # noqa: BLE001 - the point is to catch everything the user could hit
        show_error(action, exc)
