"""The Analyze page's parts: the form (paste or upload, architecture, sizes) and the report.

The analysis is `engine.feedback.standalone.analyse_file`, the one `refinery analyze` runs; this
module only puts its rows into tables and its findings into text. The last report stays in the
session, so it is still there after any other click on the page.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import streamlit as st

from engine.analysis import kernel_rows, launch_text, model_text
from engine.feedback.standalone import FileAnalysis, analyse_file, parse_sizes

ARCHS = ("sm_90", "sm_90a", "sm_80", "sm_86", "sm_89", "sm_100", "sm_120")
RESULT_KEY = "analyze_result"
PLACEHOLDER = """#define THREADS 256
__global__ void scale(float* x, int n) { ... }
int main() { ... scale<<<(n + THREADS - 1) / THREADS, THREADS>>>(x, n); }"""


@dataclass(frozen=True)
class AnalyzeRequest:
    """What the form asks for: the source and its name, the target, and the sizes and model as typed."""

    source: str | bytes
    name: str
    arch: str
    sizes: str = ""
    flops: str = ""
    nbytes: str = ""


def _default_arch() -> int:
    from engine.settings import get_settings

    arch = get_settings().gpu_arch
    return ARCHS.index(arch) if arch in ARCHS else 0


def form() -> AnalyzeRequest | None:
    """The inputs and the button; a request when the button was pressed with something to analyse."""
    upload = st.file_uploader("Upload a CUDA file", type=["cu", "cuh"], key="analyze_upload")
    source = st.text_area("…or paste CUDA source: kernels, host code, a whole program with main", height=300,
                          placeholder=PLACEHOLDER, key="analyze_source")
    left, right = st.columns([1, 3])
    arch = left.selectbox("Architecture", ARCHS, index=_default_arch(), key="analyze_arch")
    sizes = right.text_input("Sizes the file reads at run time (NAME=VALUE, comma separated)",
                             placeholder="N=4096, M=1024", key="analyze_sizes",
                             help="Each binds a #define, a constant, a host variable or a parameter of that name.")
    with st.expander("Analytical model (optional)", expanded=False):
        flops = st.text_input("FLOPs of one run, over the sizes", placeholder="2*N*N*N", key="analyze_flops")
        nbytes = st.text_input("Minimum DRAM bytes of one run (default: the cudaMemcpy sizes)",
                               placeholder="3*N*4", key="analyze_bytes")
    if not st.button("Analyze", type="primary", icon=":material/troubleshoot:", key="analyze_go"):
        return None
    if upload is not None:
        return AnalyzeRequest(upload.getvalue(), upload.name, arch, sizes, flops, nbytes)
    if not source.strip():
        st.warning("Paste CUDA source or upload a .cu file first.", icon=":material/edit_note:")
        return None
    return AnalyzeRequest(source, "pasted.cu", arch, sizes, flops, nbytes)


def analyse(request: AnalyzeRequest) -> FileAnalysis | None:
    """Run the analysis and keep its report; a malformed size or model is said in words."""
    try:
        result = analyse_file(request.source, request.name, arch=request.arch, sizes=parse_sizes(request.sizes),
                              flops=request.flops.strip() or None, nbytes=request.nbytes.strip() or None)
    except ValueError as exc:
        st.session_state.pop(RESULT_KEY, None)
        st.error(str(exc), icon=":material/error:")
        return None
    st.session_state[RESULT_KEY] = result
    return result


def findings_markdown(result: FileAnalysis) -> str:
    """The ranked findings, each with its number and its change, as the run's feedback orders them."""
    if not result.findings:
        return "No problem found by the diagnostic tools."
    lines = []
    for number, f in enumerate(result.findings, start=1):
        where = f" — `{f.kernel}`" + (f", line {f.line}" if f.line else "") if f.kernel else ""
        lines.append(f"{number}. **{f.title}**{where} · *{f.category}*  \n{f.evidence}  \n"
                     f":green[Change:] {f.suggestion}")
    return "\n".join(lines)


def show(result: FileAnalysis) -> None:
    """The report: errors in words, else kernels, launches, the model, the diagnosis and the feedback."""
    if result.error:
        st.error(result.error, icon=":material/error:")
        if result.static is not None and result.static.compile_log.strip():
            with st.expander("Compiler output", expanded=False):
                st.code(result.static.compile_log, language="text")
        return
    static = result.static
    given = ", ".join(f"{k}={v}" for k, v in result.sizes.items()) or "none given"
    found = ", ".join(f"{k}={v}" for k, v in result.file_values.items())
    st.caption(f"`{result.file}` · {static.arch} · analysed in {static.seconds:.1f} s · sizes: {given}"
               + (f" · from the file: {found}" if found else ""))
    if message := result.sizes_message():
        st.warning(message, icon=":material/straighten:")
    st.subheader("Kernels")
    st.dataframe(pd.DataFrame(kernel_rows(static)), hide_index=True, width="stretch", key="analyze_kernels")
    for kernel in static.kernels:
        note = f" — {kernel.launch.note}" if kernel.launch.note else ""
        st.markdown(f"**`{kernel.name}`** launch: {launch_text(kernel.launch)}{note}")
    st.markdown(f"**Model:** {model_text(static, result.bytes_origin, result.flops_origin)}")
    st.subheader("Diagnosis")
    classification = result.diagnostics.classification if result.diagnostics is not None else None
    if classification is not None:
        st.markdown(f"**{classification.bottleneck.label}** ({classification.reason})")
    st.markdown(findings_markdown(result))
    with st.expander("Feedback text, as a run sends it to the next round", expanded=False):
        st.code(result.feedback, language="text")
    notes = list(dict.fromkeys(static.notes + (result.diagnostics.notes if result.diagnostics else [])))
    if notes:
        with st.expander(f"{len(notes)} note(s)", expanded=False):
            st.markdown("\n".join(f"- {n}" for n in notes))
    with st.expander("Full report (JSON, as `refinery analyze --json` prints it)", expanded=False):
        st.json(result.to_json(), expanded=False)


def show_last() -> None:
    result = st.session_state.get(RESULT_KEY)
    if result is not None:
        show(result)
