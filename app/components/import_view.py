"""The Problems page's import: a path typed in or files uploaded, with what a C program does not say (header
folders, the kernel, array lengths, preprocessor defines, PolyBench datasets: the CLI's options), and the report.

Importing calls `engine.problems.import_path`, which runs the problem's own code in the sandbox, hence the
spinner. A problem imported before is left as it is unless the form's "Replace" box is ticked: runs name a
problem by its slug, so a silent second import would change what they refer to. The uploader is emptied after
each import, so the next upload brings only the files chosen then; a header an uploaded program includes comes
with it in the same upload. The report says what was run for each problem: a C program at every configuration,
a PyTorch reference on the CPU or only on meta tensors (shapes, no values), configuration by configuration.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from app.components import data
from app.components.problems_view import import_notes
from engine.problem_import import ImportReport, import_path
from engine.problem_import.cimport import ImportOptions
from engine.problem_import.cimport.configs import DEFAULT_VISIBLE
from engine.problems import Problem

LAST_IMPORT = "problems_last_import"  # session key: the last import's report, shown until the next one
UPLOAD_ROUND = "import_upload_round"  # session key: part of the uploader's key, bumped to empty it after an import
REPLACE_LABEL = "Replace a problem imported before under the same name"
PATH_HEADER_HINT = "name its folder under Header folders (C programs: headers, kernel, …)"
UPLOAD_HEADER_HINT = "upload the header too, together with the program (the upload takes several files at once)"


def _names(configs: Sequence[str]) -> str:
    return ", ".join(f"'{c}'" for c in configs)


def what_ran(problem: Problem) -> str:
    """What the import ran of the problem, in words: where a reference was only traced on meta tensors its values
    were never computed, and the report must not say they were."""
    if problem.kind == "c":
        return (f"The program ran at each of its {len(problem.configs)} configurations in the sandbox, and the "
                "generated reference gave the program's own results there.")
    on_cpu = [c.name for c in problem.configs if c.signature is not None and c.signature.ran_on == "cpu"]
    on_meta = [c.name for c in problem.configs if c.signature is not None and c.signature.ran_on != "cpu"]
    said = []
    if on_cpu:
        said.append(f"ran on the CPU at {_names(on_cpu)}")
    if on_meta:
        said.append(f"was only shape-checked on meta tensors at {_names(on_meta)} (shapes, dtypes and each "
                    "operation's shape rules; no values computed)")
    if not said:
        return "The reference was loaded and checked at every configuration in the sandbox."
    return "The reference " + "; it ".join(said) + "."


def _about(line: str, path: Path) -> bool:
    return line.startswith(f"{path}: ")


def show_report(report: ImportReport) -> None:
    """What came in, each with what was run and what its import noticed, and what did not, each failure naming the
    user's file and the cause with the notes about that file."""
    stored = {line for p in report.imported for line in (*p.warnings, *p.notes)}
    for problem in report.imported:
        st.success(f"Imported **{problem.slug}** ({problem.kind}, {len(problem.configs)} configurations, "
                   f"{len(problem.hidden_configs)} hidden): {problem.title}", icon=":material/check:")
        st.caption(what_ran(problem))
        import_notes(problem)
    for error in report.errors:
        st.error(f"**{error.path.name}** was not imported: {error.cause}", icon=":material/error:")
        for line in (*report.warnings, *report.notes):
            if _about(line, error.path):
                st.caption(f"Note: {line.removeprefix(f'{error.path}: ')}")
    if report.existing:
        st.info(f"{', '.join(report.existing)} {'was' if len(report.existing) == 1 else 'were'} imported before and "
                f"left as {'it is' if len(report.existing) == 1 else 'they are'}: tick “{REPLACE_LABEL}” and import "
                "again to overwrite.", icon=":material/info:")
    rest = [line for line in (*report.warnings, *report.notes) if not any(_about(line, e.path) for e in report.errors)
            and not any(line.endswith(f": {s}") for s in stored)]
    for line in rest:
        st.caption(f"Note: {line}")
    if not report.imported and not report.errors:
        st.warning("Nothing to import there: no KernelBench files (`<n>_<Name>.py`), C programs (`.c` with main) "
                   "or problem folders found.")


def run_import(path: Path, c_options: ImportOptions | None = None, replace: bool = False) -> ImportReport:
    with st.spinner(f"Importing {path.name} and running its reference in the sandbox…", show_time=True):
        report = import_path(path, c_options=c_options, replace=replace)
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


def _pairs(text: str) -> dict[str, str]:
    pairs = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, expression = item.partition("=")
        if name.strip() and expression.strip():
            pairs[name.strip()] = expression.strip()
    return pairs


def _words(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def c_options_form(prefix: str, *, header_folders: bool, hint: str) -> ImportOptions:
    """What a C program may not say by itself, as `refinery problems import` takes it; empty fields leave the
    importer to find it. `hint` is what a missing header's message tells the user to do in this form."""
    with st.expander("C programs: headers, kernel, array lengths, defines, datasets"):
        includes = st.text_input("Header folders", key=f"{prefix}_c_include",
                                 placeholder="/path/to/PolyBench/utilities",
                                 help="Folders holding headers the program includes, separated by commas "
                                      "(PolyBench's utilities/ is found by walking up from the program).",
                                 ) if header_folders else ""
        entry = st.text_input("Kernel function", key=f"{prefix}_c_entry", placeholder="kernel_trmm",
                              help="Only where main calls several functions that could be the kernel.")
        sizes = st.text_input("Array lengths", key=f"{prefix}_c_sizes", placeholder="x=N, A=M * N",
                              help="ARG=EXPRESSION over the sizes, for an array whose length main does not say.")
        defines = st.text_input("Preprocessor defines", key=f"{prefix}_c_defines",
                                placeholder="DATA_TYPE_IS_FLOAT, LEN=4096",
                                help="NAME or NAME=VALUE, separated by commas, as -D on a compiler's command line "
                                     "(--define on `refinery problems import`).")
        datasets = st.text_input("PolyBench datasets shown", value=",".join(DEFAULT_VISIBLE),
                                 key=f"{prefix}_c_datasets",
                                 help="The datasets that become visible configurations; MINI and an odd size are "
                                      "added hidden (--datasets on `refinery problems import`).")
    folders = tuple(Path(p).expanduser() for p in _words(includes))
    return ImportOptions(includes=folders, entry=entry.strip() or None, sizes=_pairs(sizes), defines=_words(defines),
                         datasets=tuple(d.upper() for d in _words(datasets)) or DEFAULT_VISIBLE, header_hint=hint)


def _replace_box(prefix: str) -> bool:
    return st.checkbox(REPLACE_LABEL, key=f"{prefix}_replace",
                       help="Runs and labels refer to a problem by its name: replacing it changes what they refer "
                            "to. Left unticked, a problem imported before is left as it is and the import says so.")


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
        options = c_options_form("import", header_folders=True, hint=PATH_HEADER_HINT)
        replace = _replace_box("import")
        submitted = st.form_submit_button("Import", icon=":material/download:")
    if submitted:
        with left:
            if not folder.strip():
                st.warning("Type a path first.")
            else:
                run_import(Path(folder.strip()).expanduser(), options, replace)
    round_ = st.session_state.get(UPLOAD_ROUND, 0)
    with right, st.form("upload_form", border=True):
        st.markdown("**Upload a KernelBench file or a C program**")
        uploads = st.file_uploader("KernelBench problem (.py), or a C program (.c) with its headers (.h)",
                                   type=["py", "c", "h"], accept_multiple_files=True, key=f"import_upload_{round_}",
                                   help="A C program's own headers come in the same upload: choose the .c and its "
                                        ".h files together.")
        upload_options = c_options_form("upload", header_folders=False, hint=UPLOAD_HEADER_HINT)
        upload_replace = _replace_box("upload")
        uploaded = st.form_submit_button("Upload and import", icon=":material/upload:")
    if uploaded:
        with right:
            if not uploads:
                st.warning("Choose a file first.")
            else:
                with tempfile.TemporaryDirectory() as scratch:
                    run_import(save_uploads(uploads, Path(scratch)), upload_options, upload_replace)
                st.session_state[UPLOAD_ROUND] = round_ + 1  # a new, empty uploader: these files are done
                st.rerun()
    if (report := st.session_state.get(LAST_IMPORT)) is not None:
        show_report(report)
