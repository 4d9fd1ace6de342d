"""The Run (live) page: rounds, one round's panel, charts, controls, and big runs."""

from __future__ import annotations

import sys
import time
import types

import pytest

from app.testing import add_round, app_at, bulk_run, make_run, other_code, remeasure, seed_run, set_status

PAGE = "views/run_live.py"


@pytest.fixture
def controls(refinery_home, monkeypatch) -> list:
    """A stand-in `engine.runs.run` that records the controls the page sends."""
    sent: list = []
    fake = types.ModuleType("engine.runs.run")
    fake.gpu_available = lambda: False
    fake.run_folder = lambda run_id: refinery_home / "runs" / str(run_id)
    fake.send_control = lambda run_id, action, payload=None: sent.append((run_id, action, payload))
    monkeypatch.setitem(sys.modules, "engine.runs.run", fake)
    return sent


def _open(run_id: int):
    return app_at(PAGE, query={"run": str(run_id)})


def _rounds(at) -> list[str]:
    return [m.value for m in at.markdown if m.value.startswith("**Round")]


def test_with_no_runs_the_page_points_to_new_run(controls) -> None:
    at = app_at(PAGE)
    assert any("No runs yet" in i.value for i in at.info)


def test_rounds_are_listed_newest_first_with_the_newest_open(controls) -> None:
    run_id, ids = seed_run(4)
    at = _open(run_id)
    assert not at.exception and not at.error
    assert [r.split(" · ")[0] for r in _rounds(at)] == ["**Round 3**", "**Round 2**", "**Round 1**", "**Round 0**"]
    assert f"#### Round 3 · candidate #{ids[-1]}" in [m.value for m in at.markdown]
    # every round is one code (a comment apart) measured 1.0×, 1.4× and 2.2×: its best is their median
    assert [m.value for m in at.metric][:4] == ["4 / 10", "4", "3", "1.40×"]
    assert any("median of 3 evaluations" in c.value and "only code" in c.value for c in at.caption)


def test_best_speedup_is_the_pooled_median_and_says_it_does_not_hold_over_the_runner_up(controls) -> None:
    run_id = make_run()
    steady = add_round(run_id, 0, speedup=2.0, source=other_code(1))
    remeasure(steady, 2.1, 1.9)
    outlier = add_round(run_id, 1, speedup=1.8, source=other_code(2))
    remeasure(outlier, 1.85, 2.82)  # its latest evaluation, 2.82×, is the single highest of the run
    at = _open(run_id)
    assert [m.value for m in at.metric][3] == "2.00×"
    (note,) = [c.value for c in at.caption if c.value.startswith("Best:")]
    assert f"candidate #{steady}" in note and "median of 3 evaluations" in note
    assert f"does not hold over the runner-up #{outlier} (1.85×, 3 evaluations)" in note


def test_best_speedup_says_when_it_holds_over_the_runner_up(controls) -> None:
    run_id = make_run()
    fast = add_round(run_id, 0, speedup=3.0, source=other_code(1))
    remeasure(fast, 3.05, 2.95)
    slow = add_round(run_id, 1, speedup=1.2, source=other_code(2))
    remeasure(slow, 1.22, 1.18)
    at = _open(run_id)
    assert [m.value for m in at.metric][3] == "3.00×"
    (note,) = [c.value for c in at.caption if c.value.startswith("Best:")]
    assert f"holds over the runner-up #{slow} (1.20×, 3 evaluations)" in note and "does not" not in note


def test_a_round_panel_shows_code_diff_verdict_configs_diagnostics_feedback(controls) -> None:
    run_id, ids = seed_run(3)
    at = _open(run_id)
    at.button(key=f"open_{ids[1]}").click().run()
    text = " ".join(m.value for m in at.markdown)
    assert f"Round 1 · candidate #{ids[1]}" in text
    assert any("__global__" in h.value for h in at.html)  # the code
    assert any("1 line(s) added, 1 removed" in c.value for c in at.caption)  # the diff against its parent
    assert any("Static analysis" in m.value for m in at.markdown)
    assert any("Writes are strided" in m.value for m in at.markdown)  # feedback sent onwards
    configs = [d.value for d in at.dataframe if "configuration" in d.value.columns]
    assert list(configs[0]["configuration"]) == ["small", "large", "odd-shape"]
    assert any(e.label == "Prompt and reply" for e in at.expander)
    compared = next(d.value for d in at.dataframe if "load sectors/request" in d.value.columns)
    assert list(compared["store sectors/request"]) == ["32 → 31 ✓"]
    assert any("1 kernel(s) on configuration 'large'" in c.value and "profiled in 6.1 s" in c.value for c in at.caption)
    assert any("mJ per call" in c.value and "at matched speed" in c.value for c in at.caption)


def test_a_round_whose_profile_was_refused_says_why(controls) -> None:
    run_id = make_run()
    add_round(run_id, 0, ncu_refused="performance counters refused (ERR_NVGPUCTRPERM)")
    at = _open(run_id)
    assert not at.exception
    assert any("counters refused" in w.value and "static estimates" in w.value for w in at.warning)


def test_an_incorrect_round_shows_why(controls) -> None:
    run_id = make_run()
    cid = add_round(run_id, 0, verdict="incorrect")
    at = _open(run_id)
    assert any("Incorrect" in e.value for e in at.error)
    assert any("differs" in c.value for c in at.code)
    assert cid


def test_a_new_round_appears_on_the_next_rerun(controls) -> None:
    run_id, ids = seed_run(2)
    at = _open(run_id)
    assert len(_rounds(at)) == 2
    add_round(run_id, 2, parent_id=ids[-1])
    at.run()
    assert len(_rounds(at)) == 3


def test_controls_send_pause_stop_hint_and_fork(controls) -> None:
    run_id, ids = seed_run(2)
    at = _open(run_id)
    at.button(key="ctl_pause").click().run()
    at.button(key="ctl_stop").click().run()
    at.text_area(key="hint_text").set_value("pad the shared tile")
    at.button(key="FormSubmitter:hint_form-Send hint").click().run()
    at.button(key=f"fork_{ids[-1]}").click().run()
    assert controls == [(run_id, "pause", None), (run_id, "stop", None),
                        (run_id, "hint", {"text": "pad the shared tile"}),
                        (run_id, "fork", {"candidate_id": ids[-1]})]


def test_pasting_a_candidate_inserts_it_under_the_selected_one(controls) -> None:
    run_id, ids = seed_run(2)
    at = _open(run_id)
    at.text_area(key="insert_source").set_value("__global__ void k() {}")
    at.button(key="FormSubmitter:insert_form-Insert").click().run()
    assert controls == [(run_id, "insert", {"source": "__global__ void k() {}", "parent_id": ids[-1]})]


def test_a_control_the_engine_refuses_is_said_in_words(controls, monkeypatch) -> None:
    def refuse(run_id, action, payload=None):
        raise ValueError("a hint needs some text")

    monkeypatch.setattr(sys.modules["engine.runs.run"], "send_control", refuse)
    run_id, _ = seed_run(1)
    at = _open(run_id)
    at.button(key="ctl_pause").click().run()
    assert not at.exception
    assert any("Could not send “pause”" in e.value for e in at.error)


def test_a_finished_run_has_no_controls_and_no_live_updates(controls) -> None:
    run_id, _ = seed_run(2)
    set_status(run_id, "finished")
    at = _open(run_id)
    assert not any(b.key == "ctl_pause" for b in at.button)
    assert any("has finished" in c.value for c in at.caption)
    assert not any("Live:" in c.value for c in at.caption)


def test_a_recorded_run_is_marked_and_read_only(controls) -> None:
    run_id = make_run(recorded=True, status="finished")
    add_round(run_id, 0)
    at = _open(run_id)
    assert any("recorded on a GPU" in m.value for m in at.markdown)
    assert any("Recorded runs are read-only" in c.value for c in at.caption)


def test_a_failed_run_shows_its_error(controls) -> None:

    from db.models import Run
    from db.session import session_scope

    run_id = make_run(status="failed")
    with session_scope() as session:
        session.get(Run, run_id).error = "RuntimeError: worker crashed twice"
    at = _open(run_id)
    assert any("worker crashed twice" in e.value for e in at.error)


def _picker_labels(at) -> list[str]:
    return list(at.selectbox(key="live_run_pick").options)  # as drawn, through the page's format_func


def test_the_run_picker_labels_every_run_with_its_status_now(controls) -> None:
    ids = {status: make_run(status=status) for status in ("running", "paused", "queued")}
    at = _open(ids["running"])
    for status, run_id in ids.items():
        set_status(run_id, {"running": "stopped", "paused": "failed", "queued": "running"}[status])
    at.run()  # within the list's cache time: the statuses are read again all the same
    labels = _picker_labels(at)
    assert any(label.startswith(f"#{ids['running']} ") and label.endswith("· stopped") for label in labels), labels
    assert any(label.startswith(f"#{ids['paused']} ") and label.endswith("· failed") for label in labels), labels
    assert any(label.startswith(f"#{ids['queued']} ") and label.endswith("· running") for label in labels), labels


def test_an_open_run_page_is_drawn_again_when_a_listed_run_changes_status(controls, monkeypatch) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    real_fragment, timers = st.fragment, []

    def fragment(func, *, run_every=None, **kwargs):
        wrapped = real_fragment(func, run_every=run_every, **kwargs)

        def call(*args):
            if run_every:
                timers.append((func, run_every, args))
            return wrapped(*args)
        return call

    monkeypatch.setattr(st, "fragment", fragment)
    stopped, running = make_run(status="stopped"), make_run(status="running")
    at = _open(stopped)  # a terminal run: no live check of its own
    assert not at.exception
    [(check, every, args)] = [timer for timer in timers if timer[0].__name__ == "_statuses_check"]
    assert every <= 10
    reruns: list[str] = []
    monkeypatch.setattr(st, "rerun", lambda *a, **k: reruns.append("rerun"))
    checks = AppTest.from_function(_run_checks, args=(check, args, 1))
    checks.run()
    assert not checks.exception and reruns == []  # nothing changed: nothing drawn
    set_status(running, "paused")
    checks.run()
    assert reruns == ["rerun"]


def test_an_unknown_run_number_is_said_in_words(controls) -> None:
    make_run()
    at = _open(424242)
    assert any("no run #424242" in e.value for e in at.error)
    at = app_at(PAGE, query={"run": "abc"})
    assert any("not a run number" in e.value for e in at.error)


@pytest.mark.slow
def test_a_run_of_ten_thousand_candidates_opens_quickly_and_pages(controls) -> None:
    run_id = bulk_run(10_000)
    started = time.monotonic()
    at = _open(run_id)
    elapsed = time.monotonic() - started
    assert not at.exception
    assert not any(e.value.startswith("Could not") for e in at.error), [e.value for e in at.error]
    assert len(_rounds(at)) == 15
    assert any("10,000 candidates" in c.value for c in at.caption)
    assert any("Showing" in c.value and "of 10000" in c.value for c in at.caption)
    assert elapsed < 30, f"opening took {elapsed:.1f} s"
    started = time.monotonic()
    at.run()  # nothing changed: the cached reads answer
    assert time.monotonic() - started < 10



def _run_checks(check, args: tuple, times: int) -> None:
    """An AppTest script: the live page's check, run `times` times in a row as its timer would."""
    for _ in range(times):
        check(*args)


def test_an_open_live_page_checks_once_a_second_and_a_check_with_nothing_new_reads_and_draws_nothing(
        controls, monkeypatch) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from app.components import data

    real_fragment, timers = st.fragment, []

    def fragment(func, *, run_every=None, **kwargs):
        wrapped = real_fragment(func, run_every=run_every, **kwargs)

        def call(*args):
            if run_every:
                timers.append((func, run_every, args))
            return wrapped(*args)
        return call

    monkeypatch.setattr(st, "fragment", fragment)
    run_id, _ = seed_run(3)
    at = _open(run_id)
    [(check, every, args)] = [timer for timer in timers if timer[0].__name__ == "_live_check"]
    assert every >= 1.0
    reads: list[str] = []
    for name in ("run_progress", "run_summary", "run_rounds", "run_points", "run_roofline", "candidate"):
        real = getattr(data, name)
        monkeypatch.setattr(data, name, lambda *a, _real=real, _name=name, **k: reads.append(_name) or _real(*a, **k))
    checks = AppTest.from_function(_run_checks, args=(check, args, 20))
    key = f"live_check_{run_id}"
    checks.session_state[key] = at.session_state[key]
    checks.run()
    assert not checks.exception
    assert reads.count("run_progress") <= 1 and set(reads) <= {"run_progress"}  # the status, if its read came due
    assert not checks.main.children


def test_an_llm_runs_replies_are_shown_as_they_stream(controls, refinery_home) -> None:
    from engine.propose.reply_files import ReplyStreams

    run_id = make_run(proposer="llm")
    streams = ReplyStreams(refinery_home / "runs" / str(run_id) / "stream", step=0)
    streams.complete(1, "Tiling the rows.\n```python\nclass ModelNew:", "Thinking: rows are independent.")
    at = _open(run_id)
    assert not at.exception and not at.error
    assert "#### Step 0: replies arriving" in [m.value for m in at.markdown]
    assert any("class ModelNew:" in c.value for c in at.code)
    assert any("Reasoning" in e.label for e in at.expander)
    assert any("no LLM calls" in c.value for c in at.caption)  # tokens and cost, once calls are stored
    library_run = make_run()
    assert not any("replies arriving" in m.value for m in _open(library_run).markdown)


def test_a_cpu_run_with_no_speed_yet_is_explained_in_cpu_terms(controls) -> None:
    run_id = make_run(device="cpu")
    add_round(run_id, 0, verdict="timeout", speedup=None)
    at = _open(run_id)
    assert not at.exception
    said = " ".join([c.value for c in at.caption] + [i.value for i in at.info])
    assert "This run is on the CPU" in said and "On a machine without a GPU" not in said


def test_a_run_that_ended_early_says_why(controls) -> None:
    from db import runs_repo

    run_id = make_run(rounds=6)
    for step in range(5):
        add_round(run_id, step)
    runs_repo.end_run(run_id, "finished", "finished after 5 steps: the library proposer has nothing left that this "
                                          "run has not tried")
    at = _open(run_id)
    said = " ".join(c.value for c in at.caption)
    assert "This run has finished: finished after 5 steps: the library proposer has nothing left" in said


def test_a_cpu_timing_that_shared_its_cores_is_warned_of_beside_the_speedup(controls) -> None:
    from sqlmodel import select

    from db.models import Evaluation
    from db.session import session_scope

    run_id = make_run()
    cid = add_round(run_id, 0, speedup=2.0)
    note = "CPU timing shared its cores with busy processes (cc1 98 %): these times are less trustworthy"
    with session_scope() as session:
        ev = session.exec(select(Evaluation).where(Evaluation.candidate_id == cid)).one()
        ev.timing = {"trials": 100, "notes": ["timed on cores 0-1", note]}
        session.add(ev)
    at = _open(run_id)
    assert not at.exception
    assert [w.value for w in at.warning if "shared its cores" in w.value] == [note]


def test_a_cpu_candidates_diagnostics_speak_of_the_cpu_and_agree_with_the_roofline_chart(controls) -> None:
    from db.models import Candidate, Diagnostic
    from db.session import session_scope

    run_id = make_run(device="cpu")
    candidate_id = add_round(run_id, 0, diagnostics=False)  # a CPU run stores no ncu, energy or roofline
    with session_scope() as session:
        session.get(Candidate, candidate_id).language = "c"
        session.add(Diagnostic(candidate_id=candidate_id, kind="static", data={
            "ok": True, "language": "c", "arch": "cpu", "kernels": [], "features": {}}))
    at = _open(run_id)
    assert not at.exception
    markdown = [m.value for m in at.markdown]
    assert any(m.startswith("**Static analysis (source)") for m in markdown), markdown
    assert not any("ptxas" in m or "SASS" in m or "Nsight Compute" in m for m in markdown)
    said = " ".join(c.value for c in at.caption)
    assert "No roofline: it needs" not in said
    assert "the Roofline chart places this candidate from its measured times" in said
    assert "analytical model over measured times" in said, said  # the chart does plot it
    assert not any("No roofline yet" in i.value for i in at.info)


def test_a_rounds_times_fit_their_metrics(controls) -> None:
    run_id = make_run()
    add_round(run_id, 0, speedup=100 / 1578.0)  # a candidate of 1578 µs
    at = _open(run_id)
    values = {m.label: m.value for m in at.metric}
    assert values["Candidate"] == "1.58 ms" and values["Baseline"] == "100 µs"
