"""The Export page's parts: the form that becomes ExportFilters, a preview, the run, the download."""

from __future__ import annotations

import io
import itertools
import zipfile
from pathlib import Path

import pandas as pd
import streamlit as st

from app.components.style import fmt_p_value
from engine.export import FORMATS, KINDS, ExportFilters, counted, export_dataset
from engine.export.filters import LABEL_SOURCES

VERDICTS = ("correct", "incorrect", "compile_error", "load_error", "runtime_error", "timeout",
            "integrity_violation", "needs_gpu", "proposal_error")
PREVIEW_ROWS = 20
KIND_HELP = {
    "preferences": "prompt / chosen / rejected pairs (TRL DPO and reward trainers), standard and conversational",
    "ranked": "each problem's candidates in Bradley–Terry order with every measurement",
    "trajectories": "the multi-turn conversation of each run path, with per-turn rewards",
    "candidates": "every candidate, every measured field, flat",
}


@st.cache_data(ttl=30, show_spinner=False)
def problem_choices() -> list[str]:
    from db.export_queries import problem_slugs_with_candidates

    return problem_slugs_with_candidates()


def form() -> tuple[str, str, Path | None, ExportFilters]:
    left, right = st.columns(2)
    kind = left.selectbox("Dataset", KINDS, format_func=lambda k: f"{k} — {KIND_HELP[k]}", key="export_kind")
    fmt = right.radio("Format", FORMATS, horizontal=True, key="export_format")
    with st.expander("Filters", expanded=False):
        problems = st.multiselect("Problems (none = all)", problem_choices(), key="export_problems")
        sources = st.multiselect("Label sources (preferences)", LABEL_SOURCES, default=list(LABEL_SOURCES),
                                 key="export_sources")
        agreement = st.slider("Minimum labeler agreement weight (human pairs)", 0.0, 1.0, 0.0, 0.05,
                              key="export_agreement")
        verdicts = st.multiselect("Verdicts (none = all)", VERDICTS, key="export_verdicts")
        devices = st.text_input("Devices, comma separated (empty = all)", key="export_devices")
        folder = st.text_input("Folder (empty = a new exports/KIND-TIME folder in the data folder; a folder "
                               "you name must be new or empty)", key="export_out")
    filters = ExportFilters(problems=tuple(problems), label_sources=tuple(sources), min_agreement=agreement,
                            verdicts=tuple(verdicts),
                            devices=tuple(d.strip() for d in devices.split(",") if d.strip()))
    return kind, fmt, Path(folder.strip()) if folder.strip() else None, filters


def preview(kind: str, filters: ExportFilters) -> None:
    from engine.export.run import _row_sources

    name, rows = next(iter(_row_sources(kind, filters).items()))
    sample = list(itertools.islice(rows(), PREVIEW_ROWS))
    if not sample:
        st.info("No rows match these filters yet: run some refinements or label some pairs first.",
                icon=":material/inbox:")
        return
    frame = pd.DataFrame(sample)
    if "p_value" in frame.columns:  # written as the float it is; shown so that a tiny one does not read as 0
        frame["p_value"] = frame["p_value"].map(fmt_p_value)
    for column in frame.columns:  # nested values (messages, turns) read better as text in a preview
        if frame[column].map(lambda v: isinstance(v, list | dict)).any():
            frame[column] = frame[column].map(lambda v: str(v)[:200])
    st.caption(f"First {len(sample)} rows of `{name}`")
    st.dataframe(frame, hide_index=True, width="stretch")


def zipped(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder))
    return buffer.getvalue()


def run_export(kind: str, fmt: str, out: Path | None, filters: ExportFilters) -> None:
    with st.status(f"Exporting {kind} …", expanded=True) as status:
        line = st.empty()
        result = export_dataset(kind, fmt, out, filters, lambda name, n: line.write(f"{name}: {n:,} rows"))
        status.update(label=f"Exported {result.describe()} to {result.out_dir}", state="complete")
    for name, count in result.counts.items():
        st.write(f"`{result.files[name]}`: {count:,} rows")
    download(result.out_dir, key="export_download")
    with st.expander("Dataset card (README.md)"):
        st.markdown((result.out_dir / "README.md").read_text().split("---", 2)[-1])


def download(folder: Path, key: str) -> None:
    """A zip of the folder, made when the button is clicked (not on every rerun of the page)."""
    if not folder.is_dir():
        st.caption(f"`{folder}` is gone from disk.")
        return
    st.download_button(f"Download {folder.name}.zip", lambda: zipped(folder), file_name=f"{folder.name}.zip",
                       mime="application/zip", icon=":material/download:", key=key, on_click="ignore")


def history(limit: int = 20) -> None:
    """Earlier exports, from this page and from `refinery export` alike, each counted in its own unit."""
    from db.export_queries import recent_exports

    records = recent_exports(limit)
    if not records:
        return
    st.subheader("Earlier exports")
    for record in records:
        folder = Path(record.out_dir)
        left, right = st.columns([3, 1], vertical_alignment="center")
        left.markdown(f"**{record.kind}** · {record.format} · {counted(record.kind, record.counts or {})} · "
                      f"{record.created_at:%Y-%m-%d %H:%M} UTC  \n`{folder}`")
        with right:
            download(folder, key=f"export_history_{record.id}")
