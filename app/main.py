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

PAGES = Path(__file__).parent / "views"  # a `pages/` folder would put Streamlit in its legacy multipage mode
THEME = ROOT / "assets" / "theme"


REFINE = (("problems.py", "Problems", ":material/library_books:"),
          ("new_run.py", "New run", ":material/rocket_launch:"),
          ("run_live.py", "Run (live)", ":material/monitoring:"),
          ("runs.py", "Runs", ":material/history:"))
DATA = (("flags.py", "Flags", ":material/flag:"),
        ("label.py", "Label", ":material/compare:"), ("ranker.py", "Ranker", ":material/leaderboard:"),
        ("export.py", "Export", ":material/ios_share:"))
TOOLS = (("analyze.py", "Analyze", ":material/troubleshoot:"), ("settings.py", "Settings", ":material/settings:"))


def page_specs(pages_dir: Path) -> dict[str, list[tuple[Path, str, str]]]:
    """The refinement pages, then the data pages and the tools whose scripts exist in this checkout."""
    sections = {"Refine": [(pages_dir / name, title, icon) for name, title, icon in REFINE]}
    for section, specs in (("Data", DATA), ("Tools", TOOLS)):
        found = [(pages_dir / name, title, icon) for name, title, icon in specs if (pages_dir / name).is_file()]
        if found:
            sections[section] = found
    return sections


def pages() -> dict[str, list[st.Page]]:
    return {section: [st.Page(path, title=title, icon=icon, default=path.name == "problems.py")
                      for path, title, icon in specs] for section, specs in page_specs(PAGES).items()}


def run() -> None:
    st.set_page_config(page_title="Kernel Refinery", page_icon=":material/memory:", layout="wide")
    st.logo(str(THEME / "logo.svg"), size="large", icon_image=str(THEME / "icon.svg"))
    page = st.navigation(pages())
    frame.sidebar()
    frame.gpu_notice_once()
    frame.run_page(page)


if __name__ == "__main__":  # Streamlit runs the entry point as __main__; importing it draws nothing
    run()
