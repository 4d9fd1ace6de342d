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
    st.caption("The fastest candidate whose verdict is correct, for every problem that has one.")
    runs_view.best_results()
