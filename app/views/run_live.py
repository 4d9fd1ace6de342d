"""Run (live): rounds stream in as the run process stores them; steer the run from here."""

import streamlit as st

from app.components import data, engine_api, run_view

st.title("Run (live)")
run_id = run_view.pick_run()
if run_id is None:
    st.info("No runs yet. Start one from New run.", icon=":material/inbox:")
    st.page_link("views/new_run.py", label="New run", icon=":material/rocket_launch:")
    st.stop()

progress = data.run_progress(run_id)
if progress is None:
    st.error(f"There is no run #{run_id} in this database.", icon=":material/error:")
    st.stop()
run = data.run_summary(run_id, progress.version)
folder = engine_api.events_dir(run)
seen = 0 if run.is_terminal or run.recorded else data.get_watcher().latest(folder)
progress = data.run_progress(run_id) or progress  # read after the watcher: a newer event forces a rerun
run = data.run_summary(run_id, progress.version)
version = (*progress.version, seen)

run_view.header(run, engine_api.log_path(run))
newest = data.run_rounds(run_id, version, 0, 1).items
selected = run_view.selected_candidate(run_id, newest[0].candidate_id if newest else None)
run_view.controls(run, selected)

rounds_col, detail_col = st.columns([5, 8], gap="large")
with rounds_col:
    run_view.live_rounds(run, progress, folder, seen, selected)
with detail_col:
    run_view.chart_panel(run, version, selected)
    detail = data.candidate(selected, version) if selected is not None else None
    if detail is None:
        st.caption("Open a round to see its code, verdict and diagnostics.")
    else:
        run_view.round_panel(run, detail, version)
