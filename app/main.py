"""The dashboard's entry point: `streamlit run app/main.py` from the repository root.

It is the router and the frame: page config, the navigation, the one-time "no GPU here" note,
and a guard that turns any error a page lets slip into a sentence where the page was.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `streamlit run` puts app/ first on the path, not the repository
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from app.components import frame  # noqa: E402

PAGES = Path(__file__).parent / "pages"
THEME = ROOT / "assets" / "theme"


def pages() -> dict[str, list[st.Page]]:
    """The refinement pages, then the data pages whose scripts exist in this checkout."""
    refine = [
        st.Page(PAGES / "problems.py", title="Problems", icon=":material/library_books:", default=True),
        st.Page(PAGES / "new_run.py", title="New run", icon=":material/rocket_launch:"),
        st.Page(PAGES / "run_live.py", title="Run (live)", icon=":material/monitoring:"),
        st.Page(PAGES / "runs.py", title="Runs", icon=":material/history:"),
    ]
    optional = [("label.py", "Label", ":material/compare:"), ("ranker.py", "Ranker", ":material/leaderboard:"),
                ("export.py", "Export", ":material/ios_share:")]
    labeled = [st.Page(PAGES / name, title=title, icon=icon) for name, title, icon in optional
               if (PAGES / name).is_file()]
    return {"Refine": refine, "Data": labeled} if labeled else {"Refine": refine}


def run() -> None:
    st.set_page_config(page_title="Kernel Refinery", page_icon=":material/memory:", layout="wide")
    st.logo(str(THEME / "logo.svg"), size="large", icon_image=str(THEME / "icon.svg"))
    page = st.navigation(pages())
    frame.sidebar()
    frame.gpu_notice_once()
    frame.run_page(page)


run()
