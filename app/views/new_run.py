"""New run: choose a problem, a proposer and a strategy; start a run process and see where it logs."""

import streamlit as st

from app.components import data, frame, new_run_view

st.title("New run")
st.caption("A run is a separate process (the same code as `refinery run`): closing this page does not stop it.")
new_run_view.sandbox_notice()
problems = data.library().by_slug()
if not problems:
    st.error("The problem library is empty: there is nothing to run. Import a problem on the Problems page.")
    st.stop()
values, pressed = new_run_view.form(problems, frame.has_gpu())
if pressed and (run_id := new_run_view.start(values)) is not None:
    st.session_state["nr_last_run"] = run_id
if (last := st.session_state.get("nr_last_run")) is not None:
    new_run_view.started(last)
