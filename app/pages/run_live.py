"""Run (live): rounds stream in as the run process stores them; steer the run from here."""

import streamlit as st

from app.components import data, engine_api, frame, run_view

import sys, time
_t0 = time.perf_counter()
frame.route_through_main()
st.title("Run (live)")
run_id = run_view.pick_run()
if run_id is None:
    st.info("No runs yet. Start one from New run.", icon=":material/inbox:")
    st.page_link("pages/new_run.py", label="New run", icon=":material/rocket_launch:")
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
run_view.live_updates(run, folder, seen, progress.version)
newest = data.run_rounds(run_id, version, 0, 1).items
selected = run_view.selected_candidate(run_id, newest[0].candidate_id if newest else None)
run_view.controls(run, selected)
run_view.metrics(run, progress)
charts_area = st.container()  # filled last: a new round shows before its charts are redrawn

print(f"BENCH before-rounds {time.perf_counter()-_t0:.3f} {time.time():.3f}", file=sys.stderr, flush=True)
rounds_col, detail_col = st.columns([5, 7], gap="medium")
with rounds_col:
    st.markdown("#### Rounds")
    run_view.rounds_list(run, version, selected)
with detail_col:
    detail = data.candidate(selected, version) if selected is not None else None
    if detail is None:
        st.caption("Open a round to see its code, verdict and diagnostics.")
    else:
        run_view.round_panel(run, detail)
print(f"BENCH before-charts {time.perf_counter()-_t0:.3f} {time.time():.3f}", file=sys.stderr, flush=True)
with charts_area:
    run_view.chart_panel(run, version, selected)
print(f"BENCH end {time.perf_counter()-_t0:.3f} {time.time():.3f}", file=sys.stderr, flush=True)
