"""Analyze: the static report and the feedback of any CUDA file, pasted or uploaded, with no problem."""

import streamlit as st

from app.components import analyze_view
from app.components.errors import shown_errors

st.title("Analyze")
st.caption("Registers, spills, shared memory, occupancy, the launch read from host code, SASS highlights and the "
           "ranked findings a run shows, for any CUDA source. It is compiled in the sandbox (cubin only) and never "
           "run. The same as `refinery analyze FILE.cu`.")
request = analyze_view.form()
if request is not None:
    with shown_errors("analyse the file"), st.spinner("Compiling in the sandbox and analysing…", show_time=True):
        analyze_view.analyse(request)
with shown_errors("show the report"):
    analyze_view.show_last()
