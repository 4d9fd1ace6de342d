"""Cached reads for the pages, and the process-wide event watcher.

A live run view is drawn again whenever its run changes, so its reads are cached on the run's
fingerprint (`RunProgress.version`): the cache answers until a new round, verdict or event changes
it, and 10k stored candidates cost one query per change, not one per rerun. Lists without a
fingerprint get a short time-to-live instead.
"""

from __future__ import annotations

import contextlib
import time

import streamlit as st

from app.components.events import EventWatcher
from db import queries
from engine.problems import LibraryScan, Problem, get_problem, scan_all
from engine.rank.best import BestResult, RunBest, run_bests, run_contexts
from engine.rank.best import best_per_problem as engine_best_per_problem
from engine.rank.pooled import PooledContext
from engine.store import diagnostics as stored


@st.cache_resource(show_spinner=False, on_release=lambda watcher: watcher.stop())
def get_watcher() -> EventWatcher:
    """One watchdog observer for the whole server, shared by every session."""
    return EventWatcher()


@st.cache_resource(ttl=60, show_spinner="Reading the problem library…")
def library() -> LibraryScan:
    """Shared, not copied: the scan is frozen records, and its errors do not survive pickling."""
    return scan_all()


@st.cache_resource(ttl=300, max_entries=64, show_spinner=False)
def problem(slug: str) -> Problem | None:
    try:
        return get_problem(slug)
    except (KeyError, ValueError):
        return None


REAP_EVERY_S = 10.0
_reaped_at = [0.0]


def reap_silent_runs() -> None:
    """End runs whose process is gone (engine.runs.run.reap_silent_runs) before showing runs, at most every
    REAP_EVERY_S: a dead run is shown as failed with the way to resume it, never as running."""
    now = time.monotonic()
    if now - _reaped_at[0] < REAP_EVERY_S:
        return
    _reaped_at[0] = now
    # browsing stored runs works without the engine; the engine ends dead runs when it is back
    with contextlib.suppress(ImportError):
        from engine.runs.run import reap_silent_runs as reap

        reap()


def runs_page(flt: queries.RunFilter, page: int, page_size: int) -> queries.Page[queries.RunSummary]:
    reap_silent_runs()
    return _runs_page(flt, page, page_size)


@st.cache_data(ttl=5, max_entries=64, show_spinner="Loading runs…")
def _runs_page(flt: queries.RunFilter, page: int, page_size: int) -> queries.Page[queries.RunSummary]:
    return queries.list_runs(flt, page, page_size)


@st.cache_data(ttl=10, show_spinner=False)
def run_options() -> queries.RunOptions:
    return queries.run_options()


@st.cache_data(ttl=10, show_spinner="Finding the best result per problem…")
def best_per_problem() -> list[BestResult]:
    """Best per problem and device after reviews (a review clears this cache: `forget_reviews`)."""
    return engine_best_per_problem()


@st.cache_data(max_entries=32, show_spinner=False)
def run_best(run_id: int, version: tuple) -> RunBest | None:
    """The run's best by the pooled rule, read again when the run changes."""
    return run_bests([run_id]).get(run_id)


@st.cache_data(max_entries=32, show_spinner=False)
def run_pooled(run_id: int, version: tuple) -> PooledContext | None:
    """The run's own codes pooled (its best-so-far line), read again when the run changes."""
    return run_contexts([run_id]).get(run_id)


@st.cache_data(ttl=5, max_entries=64, show_spinner=False)
def runs_bests(run_ids: tuple[int, ...]) -> dict[int, RunBest]:
    """The best of each listed run (the Runs history)."""
    return run_bests(run_ids)


def forget_reviews() -> None:
    """Drop every cached read a flag review changes, so the page shows the review at once (a review
    changes no run fingerprint, so the candidate cache would otherwise answer with the open flag). The charts'
    cache is the caller's to drop too (`run_charts` reads this module)."""
    best_per_problem.clear()
    run_best.clear()
    run_pooled.clear()
    runs_bests.clear()
    candidate.clear()


def recent_runs(limit: int = 200) -> list[queries.RunSummary]:
    reap_silent_runs()
    return _recent_runs(limit)


@st.cache_data(ttl=5, show_spinner=False)
def _recent_runs(limit: int = 200) -> list[queries.RunSummary]:
    return queries.recent_runs(limit)


def run_statuses(run_ids: tuple[int, ...]) -> dict[int, str]:
    """Uncached on purpose: a picker's labels say each run's status as it is now, not as it was
    when a cached list was read."""
    reap_silent_runs()
    return queries.run_statuses(list(run_ids))


def run_progress(run_id: int) -> queries.RunProgress | None:
    """Uncached on purpose: this is the fingerprint the cached reads below are keyed on."""
    reap_silent_runs()
    return queries.run_progress(run_id)


@st.cache_data(max_entries=32, show_spinner=False)
def run_summary(run_id: int, version: tuple) -> queries.RunSummary | None:
    return queries.get_run(run_id)


@st.cache_data(max_entries=64, show_spinner=False)
def run_rounds(run_id: int, version: tuple, page: int, page_size: int) -> queries.Page[queries.RoundRow]:
    return queries.run_rounds(run_id, page, page_size)


@st.cache_data(max_entries=16, show_spinner="Loading the run's candidates…")
def run_points(run_id: int, version: tuple) -> list[queries.RoundRow]:
    return queries.run_points(run_id)


@st.cache_data(max_entries=16, show_spinner="Loading roofline data…")
def run_roofline(run_id: int, version: tuple) -> list[stored.RooflineEntry]:
    return stored.run_roofline(run_id)


@st.cache_data(max_entries=16, show_spinner="Loading timings…")
def run_timings(run_id: int, version: tuple) -> list[stored.TimingEntry]:
    return stored.run_timings(run_id)


@st.cache_data(max_entries=16, show_spinner=False)
def run_events(run_id: int, version: tuple, limit: int = 30) -> list[queries.EventRow]:
    return queries.run_events(run_id, limit)


@st.cache_data(max_entries=128, show_spinner="Loading the candidate…")
def candidate(candidate_id: int, version: tuple) -> queries.CandidateDetail | None:
    return queries.candidate_detail(candidate_id)


def clear_library() -> None:
    """After an import: the library scan and problem lookups are stale."""
    library.clear()
    problem.clear()
