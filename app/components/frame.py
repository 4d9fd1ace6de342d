"""What surrounds every page: the sidebar, the once-per-session GPU note, the database check,
the shipped recorded runs, and the guard that keeps tracebacks off the page."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from app.components import engine_api
from app.components.errors import show_error
from app.components.style import RECORDED_WORDS

ROOT = Path(__file__).resolve().parents[2]
RECORDED_DIR = ROOT / "assets" / "recorded"


@st.cache_resource(show_spinner="Opening the database…")
def database_url() -> str:
    """Name the configured database as this server process's and open (and migrate, on first use) it, once."""
    from engine.store.database import open_settings_database

    return open_settings_database()


@st.cache_data(ttl=600, show_spinner="Looking for a GPU…")
def has_gpu() -> bool:
    return engine_api.gpu_available()


def sidebar() -> None:
    from engine.settings import get_settings

    with st.sidebar:
        st.caption(f"Data: `{get_settings().home}`")
        if has_gpu():
            st.badge("GPU available", color="green", icon=":material/memory:")
        else:
            st.badge("no GPU: compile and analyse", color="gray", icon=":material/memory:",
                     help="CUDA candidates are compiled and statically analysed; CPU candidates run.")


def gpu_notice_once() -> None:
    """On a machine without a GPU, say once per session what works and what the recordings offer."""
    if has_gpu() or st.session_state.get("gpu_notice_shown"):
        return
    st.session_state["gpu_notice_shown"] = True
    st.info("**No GPU on this machine.** Runs compile and statically analyse CUDA candidates (their verdict is "
            "“needs a GPU”) and execute CPU candidates of C problems. To try labeling, ranking and export on real "
            f"measurements, load the runs {RECORDED_WORDS} from the Runs page.", icon=":material/memory:")


def recorded_offer() -> None:
    """Offer the shipped recordings of real GPU runs; they are marked as recorded wherever shown."""
    from db.queries import count_recorded_runs

    present = count_recorded_runs()
    if present:
        st.caption(f"{present} run(s) {RECORDED_WORDS} are loaded; they carry the “{RECORDED_WORDS}” badge.")
        return
    if not RECORDED_DIR.is_dir():
        return
    try:
        loader = getattr(engine_api.runs_module(), "load_recorded", None)
    except engine_api.EngineUnavailable:
        loader = None
    if loader is None:
        st.caption("Recorded GPU runs are shipped under assets/recorded, but this engine cannot load them.")
        return
    st.info(f"Runs {RECORDED_WORDS} (made with `refinery run` on an H200) ship with the app. Load them to try "
            "labeling, ranking and export on real measurements.", icon=":material/videocam:")
    if st.button("Load the recorded runs", icon=":material/download:", key="load_recorded"):
        try:
            with st.spinner("Loading recorded runs…", show_time=True):
                count = loader()
        except Exception as exc:  # noqa: BLE001 - reported in words below the button
            show_error("load the recorded runs", exc)
        else:
            st.cache_data.clear()
            st.success(f"Loaded {count} recorded run(s).", icon=":material/check:")


def run_page(page: st.Page) -> None:
    """Run the chosen page; an error it lets escape becomes a sentence where the page was."""
    try:
        database_url()
    except Exception as exc:  # noqa: BLE001
        show_error("open the database (check REFINERY_HOME and REFINERY_DATABASE_URL)", exc)
        st.stop()
    try:
        page.run()
    except Exception as exc:  # noqa: BLE001 - Streamlit's rerun/stop are BaseExceptions and pass
        show_error(f"show the {page.title} page", exc)
