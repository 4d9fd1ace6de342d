"""Runs: the history with filters, the best result per problem, and a way into any run."""

import streamlit as st

from app.components import frame, runs_view

st.title("Runs")
frame.recorded_offer()
history, best = st.tabs(["History", "Best per problem"], key="runs_tabs")
with history:
    flt, page_size = runs_view.filters()
    runs_view.history(flt, page_size)
with best:
    st.caption("For every problem and device: the code whose median over all its evaluations (identical code "
               "pooled) is fastest, with the interval that median is known to. Rejected results are out; "
               "flagged results wait for a review.")
    runs_view.best_results()
