"""The Runs page: history with filters, best result per problem, opening a run."""

from __future__ import annotations

from app.testing import add_round, app_at, make_run, other_code, remeasure, seed_run, set_status

PAGE = "views/runs.py"


def _history(at):
    return at.dataframe(key="runs_table").value


def test_an_empty_history_says_how_to_start(refinery_home) -> None:
    at = app_at(PAGE)
    assert any("No runs match" in i.value for i in at.info)


def test_history_lists_runs_newest_first_with_recorded_marked(refinery_home) -> None:
    mine, _ = seed_run(3)
    shipped = make_run(recorded=True, status="finished")
    at = app_at(PAGE)
    table = _history(at)
    assert list(table["run"]) == [shipped, mine]
    assert list(table["recorded"]) == ["● recorded", ""]
    # the rounds are one code (a comment apart) measured 1.0× and 1.4×: its best is their pooled median
    assert table.loc[1, "best"] == "1.18×" and table.loc[1, "candidates"] == 3
    assert table.loc[1, "best standing"] == "only code measured" and table.loc[0, "best"] == "–"


def test_filtering_by_status_narrows_the_history(refinery_home) -> None:
    running, finished = make_run(), make_run()
    set_status(finished, "finished")
    at = app_at(PAGE)
    at.multiselect(key="rf_status").set_value(["finished"]).run()
    assert list(_history(at)["run"]) == [finished]
    at.selectbox(key="rf_recorded").set_value("recorded on a GPU").run()
    assert any("No runs match" in i.value for i in at.info)
    assert running


def test_many_runs_are_paged(refinery_home) -> None:
    for _ in range(30):
        make_run()
    at = app_at(PAGE)
    assert len(_history(at)) == 25
    at.number_input(key="runs_page").set_value(2).run()
    assert len(_history(at)) == 5


def test_opening_the_selected_run_goes_to_its_live_view(refinery_home) -> None:
    run_id, _ = seed_run(2)
    at = app_at(PAGE)
    assert at.button(key="open_run").disabled
    at.session_state["runs_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    at.button(key="open_run").click().run()
    assert [t.value for t in at.title] == ["Run (live)"]
    assert at.query_params["run"] == [str(run_id)] or at.query_params["run"] == str(run_id)


def test_best_per_problem_shows_the_fastest_correct_candidate(refinery_home) -> None:
    slow, fast = make_run(), make_run()
    add_round(slow, 0, speedup=1.1, source=other_code(1))
    best = add_round(fast, 1, speedup=3.5, source=other_code(2))
    at = app_at(PAGE)
    table = at.dataframe(key="best_table").value
    assert list(table["problem"]) == ["transpose"]
    assert (table.loc[0, "best speedup"], table.loc[0, "candidate"], table.loc[0, "run"]) == ("3.50×", best, fast)


def test_a_runs_best_is_its_pooled_median_not_an_outliers_lucky_evaluation(refinery_home) -> None:
    run_id = make_run()
    steady = add_round(run_id, 0, speedup=2.0, source=other_code(1))
    remeasure(steady, 2.1, 1.9)
    outlier = add_round(run_id, 1, speedup=1.8, source=other_code(2))
    remeasure(outlier, 1.85, 2.82)  # its latest evaluation is the single highest of the run
    row = _history(app_at(PAGE)).iloc[0]
    assert (row["best"], row["best standing"]) == ("2.00×", "not separable from the runner-up")
    assert row["best interval"].endswith("×") and outlier
