"""The Runs page's parts: filters over indexed columns, the paginated history, best per problem."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from app.components import best_text, data
from app.components.style import fmt_speedup
from app.components.widgets import pager
from db.queries import RunFilter, RunSummary
from engine.rank.best import BestResult, RunBest

PAGE_SIZES = (25, 50, 100)
RUN_PAGE = "views/run_live.py"


def filters() -> tuple[RunFilter, int]:
    options = data.run_options()
    cols = st.columns([3, 2, 2, 2, 2])
    problems = cols[0].multiselect("Problem", options.problem_slugs, key="rf_problem", persist_state="session")
    statuses = cols[1].multiselect("Status", options.statuses, key="rf_status", persist_state="session")
    proposers = cols[2].multiselect("Proposer", options.proposers, key="rf_proposer", persist_state="session")
    strategies = cols[3].multiselect("Strategy", options.strategies, key="rf_strategy", persist_state="session")
    origin = cols[4].selectbox("Made", ["all runs", "here", "recorded on a GPU"], key="rf_recorded",
                               persist_state="session")
    recorded = {"all runs": None, "here": False, "recorded on a GPU": True}[origin]
    page_size = st.session_state.get("rf_page_size", PAGE_SIZES[0])
    return RunFilter(tuple(problems), tuple(statuses), tuple(proposers), tuple(strategies), recorded), page_size


def runs_frame(runs: list[RunSummary], bests: dict[int, RunBest]) -> pd.DataFrame:
    """The history's rows; "best" is each run's pooled best (`engine.rank.best.run_bests`), with its standing."""
    rows = [{"run": r.id, "problem": r.problem_slug, "status": r.status, "strategy": r.strategy,
             "proposer": r.proposer, "device": r.device or "auto", "rounds": r.rounds_budget,
             "candidates": r.candidates, "correct": r.correct,
             "best": fmt_speedup(bests[r.id].speedup) if r.id in bests else fmt_speedup(None),
             "best interval": best_text.interval(bests[r.id]) if r.id in bests else "",
             "best standing": best_text.standing(bests.get(r.id)),
             "recorded": "● recorded" if r.recorded else "", "started": r.created_at} for r in runs]
    columns = ["run", "problem", "status", "strategy", "proposer", "device", "rounds", "candidates", "correct",
               "best", "best interval", "best standing", "recorded", "started"]
    return pd.DataFrame(rows, columns=columns)


def open_run(run_id: int) -> None:
    st.switch_page(RUN_PAGE, query_params={"run": str(run_id)})


def history(flt: RunFilter, page_size: int) -> None:
    """The filtered runs, newest first, a page at a time; select a row and open it."""
    first = data.runs_page(flt, 0, page_size)
    if first.total == 0:
        st.info("No runs match. Start one from New run, or clear the filters.", icon=":material/inbox:")
        return
    page_no = pager(first.total, page_size, key="runs_page", noun="runs")
    page = first if page_no == 0 else data.runs_page(flt, page_no, page_size)
    bests = data.runs_bests(tuple(r.id for r in page.items))
    event = st.dataframe(
        runs_frame(page.items, bests), hide_index=True, width="stretch", key="runs_table", on_select="rerun",
        selection_mode="single-row",
        column_config={"run": st.column_config.NumberColumn(format="#%d", width="small"),
                       "started": st.column_config.DatetimeColumn(format="YYYY-MM-DD HH:mm"),
                       "best": st.column_config.TextColumn(help="The run's fastest code by the median of all its "
                                                           "evaluations (identical code pooled)"),
                       "best standing": st.column_config.TextColumn(
                           help="Whether the best is faster than the run's runner-up by more than times move "
                                "between evaluations"),
                       "recorded": st.column_config.TextColumn(help="Measured on a real GPU, shipped with the app")})
    rows = event["selection"]["rows"] if event else []
    chosen = page.items[rows[0]] if rows and rows[0] < len(page.items) else None
    with st.container(horizontal=True, vertical_alignment="center"):
        if st.button(f"Open run #{chosen.id}" if chosen else "Open the selected run", type="primary",
                     icon=":material/open_in_new:", disabled=chosen is None, key="open_run"):
            open_run(chosen.id)
        st.selectbox("Rows per page", PAGE_SIZES, key="rf_page_size", label_visibility="collapsed",
                     format_func=lambda n: f"{n} per page", width=140)
        if chosen is None:
            st.caption("Select a row to open its run.")


def _interval(b: BestResult) -> str:
    return f"{b.speedup_low:.2f}–{b.speedup_high:.2f}×"


def _standing(b: BestResult) -> str:
    if b.contenders == 1:
        return "only code measured"
    return "holds" if b.holds else "not separable from the next"


def best_frame(best: list[BestResult]) -> pd.DataFrame:
    """One row per problem and device: the pooled median speedup, its interval and how it stands."""
    rows = [{"problem": b.problem_slug, "device": b.device or "", "best speedup": fmt_speedup(b.speedup),
             "interval": _interval(b), "between runs": f"±{100 * (math.exp(b.spread) - 1):.0f} %",
             "evaluations": b.evaluations, "standing": _standing(b),
             "candidate": b.candidate_id, "run": b.run_id, "runs": b.runs,
             "awaiting review": b.awaiting_review, "recorded": "● recorded" if b.recorded else ""} for b in best]
    return pd.DataFrame(rows, columns=["problem", "device", "best speedup", "interval", "between runs", "evaluations",
                                       "standing",
                                       "candidate", "run", "runs", "awaiting review", "recorded"])


def best_results() -> None:
    best = data.best_per_problem()
    if not best:
        st.caption("No correct, admitted, timed candidate yet: best results appear once a run measures one "
                   "(a flagged result counts once a person clears it on the Flags page).")
        return
    if any(b.awaiting_review for b in best):
        st.warning("Some results are flagged and not yet reviewed: they are left out here until a person "
                   "clears them on the Flags page (column 'awaiting review').", icon=":material/flag:")
    event = st.dataframe(best_frame(best), hide_index=True, width="stretch", key="best_table", on_select="rerun",
                         selection_mode="single-row",
                         column_config={"run": st.column_config.NumberColumn(format="#%d"),
                                        "candidate": st.column_config.NumberColumn(format="#%d")})
    rows = event["selection"]["rows"] if event else []
    chosen = best[rows[0]] if rows and rows[0] < len(best) else None
    if st.button(f"Open run #{chosen.run_id}" if chosen and chosen.run_id else "Open the best result's run",
                 disabled=chosen is None or chosen.run_id is None, key="open_best", icon=":material/open_in_new:"):
        st.session_state[f"selected_{chosen.run_id}"] = chosen.candidate_id
        st.session_state[f"follow_{chosen.run_id}"] = False
        open_run(chosen.run_id)
