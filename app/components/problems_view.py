"""The Problems page's parts: filtering the library, one problem's card, and importing.

Filtering is pure (tested without Streamlit); importing calls `engine.problems.import_path`,
which validates by running the problem's own code in a child process, hence the spinner. KernelBench
files, C programs (a `.c` file, a folder of them, a PolyBench checkout) and problem folders all come in
through the same two forms. What an import noticed (configurations replaced or dropped, inputs it could not
translate, outputs whose values are rounding) is kept with the problem: shown under the import's report, which
stays until the next import, and on the problem's card.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from app.components import data
from app.components.code import show_code
from engine.problems import ImportReport, Problem, import_path
from engine.problems.cimport import ImportOptions

# Buckets of the largest configuration's minimum DRAM traffic: how big a problem is to a GPU.
LAST_IMPORT = "problems_last_import"  # session key: the last import's report, shown until the next one
SIZE_BUCKETS: dict[str, tuple[float, float]] = {
    "small (< 64 MB)": (0, 64e6),
    "medium (64 MB – 1 GB)": (64e6, 1e9),
    "large (≥ 1 GB)": (1e9, float("inf")),
}


@dataclass(frozen=True)
class ProblemFilter:
    text: str = ""
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    cpu_only: bool = False  # only problems whose rounds run without a GPU


def largest_bytes(problem: Problem) -> float | None:
    try:
        return problem.min_bytes(problem.largest_config)
    except Exception:  # noqa: BLE001 - a bad model expression only costs the size filter
        return None


def size_bucket(problem: Problem) -> str | None:
    nbytes = largest_bytes(problem)
    if nbytes is None:
        return None
    return next((name for name, (lo, hi) in SIZE_BUCKETS.items() if lo <= nbytes < hi), None)


def matches(problem: Problem, flt: ProblemFilter) -> bool:
    words = flt.text.lower().split()
    haystack = " ".join([problem.slug, problem.title, problem.description, *problem.tags]).lower()
    return (all(w in haystack for w in words)
            and (not flt.kinds or problem.kind in flt.kinds)
            and (not flt.tags or set(flt.tags) <= set(problem.tags))
            and (not flt.sizes or size_bucket(problem) in flt.sizes)
            and (not flt.cpu_only or problem.runs_on_cpu))


def filter_problems(problems: Sequence[Problem], flt: ProblemFilter) -> list[Problem]:
    return [p for p in problems if matches(p, flt)]


def problems_frame(problems: Sequence[Problem]) -> pd.DataFrame:
    rows = []
    for p in problems:
        nbytes = largest_bytes(p)
        rows.append({"slug": p.slug, "title": p.title, "kind": p.kind, "tags": ", ".join(p.tags),
                     "configs": f"{len(p.visible_configs)} + {len(p.hidden_configs)} hidden",
                     "largest": f"{nbytes / 1e6:,.0f} MB" if nbytes else "–",
                     "implementations": len(p.implementations), "runs on the CPU": p.runs_on_cpu,
                     "source": p.source})
    columns = ["slug", "title", "kind", "tags", "configs", "largest", "implementations", "runs on the CPU", "source"]
    return pd.DataFrame(rows, columns=columns)


def configs_frame(problem: Problem) -> pd.DataFrame:
    """The visible configurations with their analytical work: hidden ones are only counted."""
    rows = []
    for config in problem.visible_configs:
        flops, nbytes = problem.flops(config), problem.min_bytes(config)
        ai = problem.arithmetic_intensity(config)
        rows.append({"configuration": config.name, "params": ", ".join(f"{k}={v}" for k, v in config.params.items()),
                     "GFLOP": f"{flops / 1e9:.3g}" if flops else "0" if flops == 0 else "–",
                     "min MB": f"{nbytes / 1e6:.3g}" if nbytes else "–", "FLOP/byte": f"{ai:.3g}" if ai else "–"})
    return pd.DataFrame(rows)


def filters(problems: Sequence[Problem]) -> ProblemFilter:
    """Search box and filter widgets; they keep their values across page switches."""
    kinds = sorted({p.kind for p in problems})
    tags = sorted({t for p in problems for t in p.tags})
    cols = st.columns([3, 2, 3, 2])
    text = cols[0].text_input("Search", placeholder="slug, title, description or tag", key="pf_text",
                              persist_state="session")
    chosen_kinds = cols[1].multiselect("Kind", kinds, key="pf_kind", persist_state="session")
    chosen_tags = cols[2].multiselect("Tags", tags, key="pf_tags", persist_state="session")
    sizes = cols[3].multiselect("Size", list(SIZE_BUCKETS), key="pf_size", persist_state="session",
                                help="Minimum DRAM traffic of the largest configuration.")
    cpu_only = st.toggle("Only problems that run on the CPU", key="pf_cpu", persist_state="session",
                         help="Problems shipping CPU implementations: their rounds run on a machine without a GPU "
                              "(CUDA candidates there are compiled and analysed, never run).")
    return ProblemFilter(text or "", tuple(chosen_kinds), tuple(chosen_tags), tuple(sizes), bool(cpu_only))


def problem_card(problem: Problem) -> None:
    st.subheader(problem.title)
    with st.container(horizontal=True, gap="small"):
        st.badge(problem.kind, color="blue", icon=":material/code:")
        st.badge(problem.source, color="gray", icon=":material/inventory_2:")
        st.badge(problem.dtype, color="gray")
        for tag in problem.tags:
            st.badge(tag, color="primary")
    if problem.description:
        st.markdown(problem.description)
    rtol, atol = problem.tolerance
    st.caption(f"Slug `{problem.slug}` · tolerance rtol {rtol:g}, atol {atol:g} · folder `{problem.folder}`")
    import_notes(problem, expanded=False)
    st.markdown("**Visible configurations**")
    st.dataframe(configs_frame(problem), hide_index=True, width="stretch")
    if problem.hidden_configs:
        st.caption(f"{len(problem.hidden_configs)} hidden configuration(s) are checked on every candidate "
                   "but never shown in a prompt.")
    st.markdown(f"**Reference** · `{problem.reference_path.name}`")
    show_code(problem.reference_source, "python" if problem.kind == "pytorch" else "c", height=460)
    if problem.implementations:
        st.markdown("**Shipped implementations** (what the library proposer starts from)")
        st.dataframe(pd.DataFrame([{"name": i.name, "strategy": i.strategy, "device": i.device,
                                    "tunables": ", ".join(i.tunables), "summary": i.summary}
                                   for i in problem.implementations]), hide_index=True, width="stretch")


def import_notes(problem: Problem, expanded: bool = True) -> None:
    """What the problem's import found: warnings (what limits judging candidates) in full, then its notes."""
    for warning in problem.warnings:
        st.warning(warning, icon=":material/warning:")
    if problem.notes:
        with st.expander(f"What the import noticed ({len(problem.notes)})", expanded=expanded,
                         icon=":material/info:"):
            st.markdown("\n".join(f"- {note}" for note in problem.notes))


def _about(line: str, path: Path) -> bool:
    return line.startswith(f"{path}: ")


def show_report(report: ImportReport) -> None:
    """What came in, each with what its import noticed, and what did not, each failure naming the user's file and
    the cause with the notes about that file."""
    stored = {line for p in report.imported for line in (*p.warnings, *p.notes)}
    for problem in report.imported:
        st.success(f"Imported **{problem.slug}** ({problem.kind}, {len(problem.configs)} configurations, "
                   f"{len(problem.hidden_configs)} hidden): {problem.title}", icon=":material/check:")
        import_notes(problem)
    for error in report.errors:
        st.error(f"**{error.path.name}** was not imported: {error.cause}", icon=":material/error:")
        for line in (*report.warnings, *report.notes):
            if _about(line, error.path):
                st.caption(f"Note: {line.removeprefix(f'{error.path}: ')}")
    rest = [line for line in (*report.warnings, *report.notes) if not any(_about(line, e.path) for e in report.errors)
            and not any(line.endswith(f": {s}") for s in stored)]
    for line in rest:
        st.caption(f"Note: {line}")
    if not report.imported and not report.errors:
        st.warning("Nothing to import there: no KernelBench files (`<n>_<Name>.py`), C programs (`.c` with main) "
                   "or problem folders found.")


def run_import(path: Path, c_options: ImportOptions | None = None) -> ImportReport:
    with st.spinner(f"Importing {path.name} and running its reference once to check it…", show_time=True):
        report = import_path(path, c_options=c_options)
    data.clear_library()
    st.session_state[LAST_IMPORT] = report
    return report


def save_uploads(uploads: Sequence, folder: Path) -> Path:
    """Write uploaded files into `folder`: one file is imported alone, several (a .c with its headers) as a folder."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for upload in uploads:
        target = folder / Path(upload.name).name
        target.write_bytes(upload.getvalue())
        paths.append(target)
    return paths[0] if len(paths) == 1 else folder


def c_options_form() -> ImportOptions:
    """What a C program may not say by itself; empty fields leave the importer to find it."""
    with st.expander("C programs: headers, kernel, array lengths"):
        includes = st.text_input("Header folders", key="import_c_include", placeholder="/path/to/PolyBench/utilities",
                                 help="Folders holding headers the program includes, separated by commas "
                                      "(PolyBench's utilities/ is found by walking up from the program).")
        entry = st.text_input("Kernel function", key="import_c_entry", placeholder="kernel_trmm",
                              help="Only where main calls several functions that could be the kernel.")
        sizes = st.text_input("Array lengths", key="import_c_sizes", placeholder="x=N, A=M * N",
                              help="ARG=EXPRESSION over the sizes, for an array whose length main does not say.")
    pairs = {}
    for item in filter(None, (part.strip() for part in sizes.split(","))):
        name, _, expression = item.partition("=")
        if name.strip() and expression.strip():
            pairs[name.strip()] = expression.strip()
    folders = tuple(Path(p.strip()).expanduser() for p in includes.split(",") if p.strip())
    return ImportOptions(includes=folders, entry=entry.strip() or None, sizes=pairs)


def import_panel() -> None:
    """Import a KernelBench folder, a C program or folder of them, or a problem folder by path, or upload files."""
    left, right = st.columns(2, gap="large")
    with left, st.form("import_path_form", border=True):
        st.markdown("**From a file or folder on this machine**")
        folder = st.text_input("Path", placeholder="/path/to/KernelBench/level1 or /path/to/PolyBenchC",
                               key="import_path",
                               help="A KernelBench checkout or level folder, one KernelBench file, a C program "
                                    "(.c with main) or a folder of them such as a PolyBench checkout, or a problem "
                                    "folder with a problem.toml.")
        options = c_options_form()
        submitted = st.form_submit_button("Import", icon=":material/download:")
    if submitted:
        with left:
            if not folder.strip():
                st.warning("Type a path first.")
            else:
                run_import(Path(folder.strip()).expanduser(), options)
    with right, st.form("upload_form", border=True):
        st.markdown("**Upload a KernelBench file or a C program**")
        uploads = st.file_uploader("KernelBench problem (.py), or a C program (.c) with its headers (.h)",
                                   type=["py", "c", "h"], accept_multiple_files=True, key="import_upload")
        uploaded = st.form_submit_button("Upload and import", icon=":material/upload:")
    if uploaded:
        with right:
            if not uploads:
                st.warning("Choose a file first.")
            else:
                with tempfile.TemporaryDirectory() as scratch:
                    run_import(save_uploads(uploads, Path(scratch)))
    if (report := st.session_state.get(LAST_IMPORT)) is not None:
        show_report(report)
