"""The Run (live) page's parts: header, controls, the live round list, round panel, charts.

Live updates: while the run can change, a fragment checks every CHECK_EVERY_S whether it did (see
`app.components.live_check`): the watcher's newest event number, kept in memory, against the one drawn,
and now and then the run's fingerprint in the database. A check that finds nothing new draws nothing and
reads nothing, so an open tab costs next to no CPU between rounds; one that does find something draws
the whole page again (metrics, round list, charts, round panel), through reads cached on the run's
fingerprint, at most every REDRAW_EVERY_S.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import streamlit as st

from app.components import best_text, data, engine_api, run_charts
from app.components.code import language_of, show_code, show_diff
from app.components.diagnostics import configs_frame, findings_frame, show_diagnostics
from app.components.errors import shown_errors
from app.components.flag_review import flag_panel, shown_reward
from app.components.live_check import CHECK_EVERY_S, STATUS_EVERY_S, LiveCheck
from app.components.style import (
    fmt_speedup,
    fmt_us,
    recorded_badge,
    status_badge,
    verdict_badge,
    verdict_markdown,
    verdict_words,
)
from app.components.widgets import pager
from db.queries import CandidateDetail, RoundRow, RunProgress, RunSummary
from engine.store.diagnostics import candidate_diagnostics, configs_of

ROUNDS_PER_PAGE = 15


def pick_run() -> int | None:
    """The run named by `?run=ID`, else a picker over the newest runs (choosing one sets the URL).

    Each label says its run's status as read now (the list of runs is cached for seconds, a status is
    not), and an open page is drawn again when any listed run changes status (`_statuses_check`), so a
    run that was stopped, paused, failed or started elsewhere never shows its old status here.
    """
    recent = data.recent_runs()
    wanted = st.query_params.get("run")
    try:
        run_id = int(wanted) if wanted else None
    except ValueError:
        st.error(f"“{wanted}” is not a run number; pick a run below.")
        run_id = None
    ids = [r.id for r in recent]
    if run_id is not None and run_id not in ids:
        ids.insert(0, run_id)
    if not ids:
        return None
    listed = tuple(r.id for r in recent)
    status = data.run_statuses(listed)
    labels = {r.id: f"#{r.id} · {r.problem_slug} · {r.strategy} · {status.get(r.id, r.status)}"
                    + (" · recorded" if r.recorded else "") for r in recent}
    index = ids.index(run_id) if run_id in ids else 0
    choice = st.selectbox("Run", ids, index=index, format_func=lambda i: labels.get(i, f"#{i}"), key="live_run_pick")
    if str(choice) != st.query_params.get("run"):
        st.query_params["run"] = str(choice)
    st.fragment(_statuses_check, run_every=STATUS_EVERY_S)(listed, status)
    return choice


def _statuses_check(listed: tuple[int, ...], drawn: dict[int, str]) -> None:
    """Draws nothing; has the page drawn again when a run in the picker changed status since it was drawn
    (a run ended or was paused elsewhere: a terminal run's page has no other reason to be drawn again)."""
    if data.run_statuses(listed) != drawn:
        st.rerun()


def header(run: RunSummary, log: Path) -> None:
    st.subheader(f"Run #{run.id} · {run.problem_slug}")
    with st.container(horizontal=True, gap="small"):
        status_badge(run.status)
        st.badge(run.strategy, color="gray", icon=":material/account_tree:")
        st.badge(f"proposer: {run.proposer}", color="gray", icon=":material/lightbulb:")
        st.badge(f"device: {run.device or 'auto'}", color="gray", icon=":material/memory:")
        if run.recorded:
            recorded_badge()
    if run.error:
        st.error(f"The run stopped with an error: {run.error}", icon=":material/error:")
    if not run.recorded:
        st.caption(f"Run log: `{log}`")


def metrics(run: RunSummary, progress: RunProgress) -> None:
    steps = 0 if progress.last_step is None else progress.last_step + 1
    cols = [*st.columns(2), *st.columns(2)]
    cols[0].metric("Rounds", f"{steps} / {run.rounds_budget}")
    cols[1].metric("Candidates", f"{run.candidates:,}")
    cols[2].metric("Correct", f"{run.correct:,}")
    best = data.run_best(run.id, progress.version)
    cols[3].metric("Best speedup", fmt_speedup(best.speedup if best else None),
                   help="The fastest code by the median of all its evaluations (identical code pooled), "
                        "not one lucky evaluation.")
    st.caption(best_text.note(best))
    if run.proposer == "llm":
        from engine.runs.usage import run_usage

        st.caption(f":material/token: {run_usage(run.id).describe()}")


def live_rounds(run: RunSummary, progress: RunProgress, folder: Path, seq: int, selected: int | None) -> None:
    """Metrics and the round list, as of event `seq`; on a run that can still change, the live check too."""
    if not (run.is_terminal or run.recorded):
        st.session_state[f"live_check_{run.id}"] = LiveCheck.drawn(seq, progress.version, time.monotonic())
        st.fragment(_live_check, run_every=CHECK_EVERY_S)(run.id, folder)
        st.caption(f":green[●] Live: watching the run's event folder ({data.get_watcher().mode(folder)}); "
                   f"last event #{seq}. New rounds appear on their own.")
        if run.proposer == "llm":
            st.fragment(_streaming_replies, run_every=CHECK_EVERY_S)(folder.parent / "stream")
    elif run.recorded:
        st.caption("Recorded runs are read-only: results measured on a GPU, stored; nothing new will arrive.")
    else:
        ending = next((e for e in data.run_events(run.id, progress.version, limit=5) if e.kind == run.status), None)
        why = f": {ending.message}" if ending and ending.message else ""
        st.caption(f"This run has {run.status}{why}. Showing what it stored (controls act on running runs only).")
    metrics(run, progress)
    st.markdown("#### Rounds")
    rounds_list(run, (*progress.version, seq), selected)


STREAM_FRESH_S = 20.0  # a reply file this recent belongs to the step being asked now


def _streaming_replies(folder: Path) -> None:
    """The LLM's replies of the step being asked, as they form (the run process writes them a few times a
    second): the answer as text, the reasoning folded. Nothing is drawn once the step's replies are old."""
    from engine.propose.reply_files import latest_replies

    if not folder.is_dir():
        return
    newest = max((p.stat().st_mtime for p in folder.glob("*.txt")), default=0.0)
    if time.time() - newest > STREAM_FRESH_S:
        return
    replies = latest_replies(folder)
    step = max(key[0] for key in replies)
    st.markdown(f"#### Step {step}: replies arriving")
    for sample in sorted({key[1] for key in replies if key[0] == step}):
        reasoning, answer = replies.get((step, sample, "reasoning")), replies.get((step, sample, "answer"))
        st.caption(f"sample {sample}: {len(answer or ''):,} characters of answer"
                   + (f", {len(reasoning):,} of reasoning" if reasoning else ""))
        if reasoning:
            with st.expander("Reasoning (kept apart from the answer)", expanded=False):
                st.text(reasoning[-4000:])
        if answer:
            st.code(answer[-6000:], language="markdown", wrap_lines=True)


def _live_check(run_id: int, folder: Path) -> None:
    """One check of an open tab: draws nothing; has the whole page drawn again when the run changed.

    Runs as a fragment every CHECK_EVERY_S, so it must stay cheap: the event number comes from the
    watcher's memory, and the database is asked only when `LiveCheck.due` says so.
    """
    check = st.session_state.get(f"live_check_{run_id}")
    if check is None:
        return
    if check.due(data.get_watcher().latest(folder), time.monotonic(), lambda: _fingerprint(run_id)):
        st.rerun()


def _fingerprint(run_id: int) -> tuple | None:
    progress = data.run_progress(run_id)
    return None if progress is None else progress.version


def _send(run_id: int, action: str, payload: dict | None, done: str) -> None:
    with shown_errors(f"send “{action}” to run #{run_id}"):
        engine_api.send_control(run_id, action, payload)
        st.toast(done, icon=":material/send:")


def controls(run: RunSummary, selected: int | None) -> None:
    """Pause, resume, stop, a hint for the next round, and pasting a candidate of one's own."""
    if run.recorded or run.is_terminal:  # the round list says why there is nothing to steer
        return
    with st.container(horizontal=True, gap="small"):
        if st.button("Pause", icon=":material/pause:", disabled=run.status == "paused", key="ctl_pause"):
            _send(run.id, "pause", None, "Pause requested: the run pauses after the current step.")
        if st.button("Resume", icon=":material/play_arrow:", disabled=run.status != "paused", key="ctl_resume"):
            _send(run.id, "resume", None, "Resume requested.")
        if st.button("Stop", icon=":material/stop:", key="ctl_stop"):
            _send(run.id, "stop", None, "Stop requested: the run stops after the current step.")
        with st.popover("Hint for the next round", icon=":material/tips_and_updates:"), \
                st.form("hint_form", clear_on_submit=True, border=False):
            text = st.text_area("Hint", placeholder="e.g. stage the tile in shared memory and pad it",
                                key="hint_text")
            if st.form_submit_button("Send hint", icon=":material/send:"):
                if text.strip():
                    _send(run.id, "hint", {"text": text.strip()}, "Hint queued for the next round.")
                else:
                    st.warning("Write a hint first.")
        with st.popover("Paste a candidate", icon=":material/content_paste:"), \
                st.form("insert_form", clear_on_submit=True, border=False):
            source = st.text_area("Candidate source", height=220, key="insert_source",
                                  placeholder="A full candidate, in the problem's format")
            under = st.checkbox(f"As a child of candidate #{selected}" if selected else "As a new root",
                                value=selected is not None, disabled=selected is None, key="insert_under")
            if st.form_submit_button("Insert", icon=":material/add:"):
                if source.strip():
                    _send(run.id, "insert", {"source": source, "parent_id": selected if under else None},
                          "Candidate queued: it is evaluated as the next round.")
                else:
                    st.warning("Paste a candidate's source first.")


def _round_label(row: RoundRow) -> str:
    step = "–" if row.step is None else str(row.step)
    sample = f".{row.sample}" if row.sample else ""
    bits = [f"**Round {step}{sample}**", f"#{row.candidate_id}", verdict_markdown(row.verdict)]
    if row.speedup is not None:
        bits.append(f"**{fmt_speedup(row.speedup)}**")
    if row.flagged:
        bits.append(":orange[flagged]")
    return " · ".join(bits)


def _round_caption(row: RoundRow) -> str:
    bits = [b for b in (row.strategy, f"by {row.origin}") if b]
    if row.message and row.verdict not in ("correct", None):
        bits.append(row.message[:140])
    return " · ".join(bits)


def selected_candidate(run_id: int, newest: int | None) -> int | None:
    """The user's pick for this run, or the newest candidate while following the run."""
    key = f"selected_{run_id}"
    if st.session_state.get(f"follow_{run_id}", True) or st.session_state.get(key) is None:
        st.session_state[key] = newest
    return st.session_state.get(key)


def _select(run_id: int, candidate_id: int) -> None:
    st.session_state[f"selected_{run_id}"] = candidate_id
    st.session_state[f"follow_{run_id}"] = False


def _follow(run_id: int) -> None:
    st.session_state[f"follow_{run_id}"] = True


def rounds_list(run: RunSummary, version: tuple, selected: int | None) -> None:
    """Newest rounds first, a page at a time; "Open" shows a round in the panel beside."""
    page_no = pager(run.candidates, ROUNDS_PER_PAGE, key=f"rounds_page_{run.id}", noun="candidates")
    page = data.run_rounds(run.id, version, page_no, ROUNDS_PER_PAGE)
    if not page.items:
        st.info("No rounds yet. The first one appears here as soon as it is stored.", icon=":material/hourglass_top:")
        return
    if not st.session_state.get(f"follow_{run.id}", True) and st.button(
            "Follow the newest round", icon=":material/vertical_align_top:", key=f"follow_btn_{run.id}"):
        _follow(run.id)
        st.rerun()
    for row in page.items:
        with st.container(border=True, key=f"round-{row.candidate_id}", gap=None):
            left, right = st.columns([5, 2], vertical_alignment="center")
            left.markdown(_round_label(row))
            left.caption(_round_caption(row))
            if right.button("Open", key=f"open_{row.candidate_id}", width="stretch",
                            type="primary" if row.candidate_id == selected else "secondary",
                            icon=":material/visibility:" if row.candidate_id == selected else None):
                _select(run.id, row.candidate_id)
                st.rerun()  # the whole page: the round panel beside the list shows the pick


def round_panel(run: RunSummary, detail: CandidateDetail, version: tuple) -> None:
    """One round: code, diff, verdict and log, configurations, diagnostics, feedback, prompt/reply."""
    ev = detail.evaluation
    diagnostics = candidate_diagnostics(detail)
    step = "–" if detail.step is None else detail.step
    st.markdown(f"#### Round {step} · candidate #{detail.id}")
    parent = f"child of #{detail.parent_id}" if detail.parent_id else "root"
    st.caption(f"{parent} · depth {detail.depth} · proposed by {detail.origin}"
               + (f" · strategy `{detail.strategy}`" if detail.strategy else "")
               + (f" · {detail.latency_s:.1f} s to propose" if detail.latency_s else ""))
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        verdict_badge(ev.verdict if ev else None)
        if ev and (ev.recorded or run.recorded):
            recorded_badge()
        if ev and ev.flagged and ev.flag_review is None:
            st.badge("flagged: implausible speedup, re-measured", color="orange", icon=":material/flag:")
        if not run.is_terminal and not run.recorded and st.button(
                "Fork from this candidate", icon=":material/call_split:", key=f"fork_{detail.id}"):
            _send(run.id, "fork", {"candidate_id": detail.id},
                  f"Fork requested: the next round starts from candidate #{detail.id}.")
    if ev and ev.flagged:
        flag_panel(ev)
    if ev:
        cols = [*st.columns(2), *st.columns(2)]  # two a row: a metric in a quarter of the detail column is cut
        cols[0].metric("Speedup", fmt_speedup(ev.speedup))
        cols[1].metric("Candidate", fmt_us(ev.candidate_us))
        cols[2].metric("Baseline", fmt_us(ev.baseline_us))
        reward, _ = shown_reward(ev)
        cols[3].metric("Reward", "–" if reward is None else f"{reward:.3f}",
                       help="The reward that counts now: a flagged result's speed term is held until a person "
                            "clears it" if ev.flagged else None)
        for note in ev.timing.noisy_host_notes:
            st.warning(note, icon=":material/speed:")
    else:
        st.info("Not evaluated yet: building and verifying.", icon=":material/hourglass_top:")
    tabs = st.tabs(["Code", "Diff vs parent", "Verdict and log", "Configurations", "Diagnostics", "Feedback"],
                   key="round_tabs")
    with tabs[0]:
        show_code(detail.source, language_of(detail.language, detail.source))
    with tabs[1]:
        show_diff(detail.parent_source, detail.source, f"candidate #{detail.parent_id}", f"candidate #{detail.id}")
    with tabs[2]:
        _verdict_and_log(detail)
    with tabs[3]:
        if ev and ev.configs:
            st.dataframe(configs_frame(configs_of(ev.configs)), hide_index=True, width="stretch")
            st.caption("Hidden configurations are checked but never shown in a prompt.")
        else:
            st.caption("No per-configuration results: the candidate did not get as far as running.")
    with tabs[4]:
        timed = bool(ev and ev.verdict == "correct" and any(c.candidate for c in configs_of(ev.configs or [])))
        # the Roofline chart falls back to the problem's model only for a run that stored no roofline at all
        charted = timed and diagnostics.roofline is None and not data.run_roofline(run.id, version)
        show_diagnostics(diagnostics, cpu=detail.language == "c", charted=charted)
    with tabs[5]:
        feedback = diagnostics.feedback
        if feedback is not None and (diagnostics.feedback_text or feedback.details):
            st.caption("What the next round was told about this candidate:")
            st.markdown(diagnostics.feedback_text)
            if feedback.details:
                with st.expander(f"The {len(feedback.details)} finding(s) behind it"):
                    st.dataframe(findings_frame(feedback), hide_index=True, width="stretch")
        else:
            st.caption("No feedback was sent onwards from this candidate.")
    with st.expander("Prompt and reply", expanded=False):
        if detail.prompt or detail.reply:
            st.markdown("**Prompt**")
            st.code(detail.prompt or "(none)", language="markdown", wrap_lines=True, height=320)
            st.markdown("**Reply**")
            st.code(detail.reply or "(none)", language="markdown", wrap_lines=True, height=320)
            if detail.tokens_in or detail.tokens_out:
                st.caption(f"{detail.tokens_in or 0} tokens in, {detail.tokens_out or 0} out.")
        else:
            st.caption(f"The {detail.origin} proposer sends no prompt. Its notes on this candidate:")
            st.code(json.dumps(detail.proposal, indent=2, default=str), language="json")


def _verdict_and_log(detail: CandidateDetail) -> None:
    ev = detail.evaluation
    if ev is None:
        st.caption("No verdict yet.")
        return
    text = f"**{verdict_words(ev.verdict).capitalize()}**" + (f": {ev.message}" if ev.message else "")
    if ev.verdict == "correct":
        st.success(text, icon=":material/check_circle:")
    elif ev.verdict == "needs_gpu":
        st.info(text, icon=":material/memory:")
    else:
        st.error(text, icon=":material/error:")
    if ev.integrity:
        st.markdown("**Integrity checks**")
        st.dataframe(pd.DataFrame(ev.integrity), hide_index=True, width="stretch")
    if ev.log:
        st.markdown("**Log**")
        st.code(ev.log, language="text", height=min(420, 22 * (ev.log.count("\n") + 2)))
    timing = ev.timing.model_dump(mode="json", exclude_defaults=True)  # what this row recorded
    if timing:
        with st.expander("Timing details"):
            st.json(timing, expanded=1)


def chart_panel(run: RunSummary, version: tuple, selected: int | None) -> None:
    """Speedup over rounds, the roofline with the device's roofs, the search tree."""
    specs = run_charts.chart_specs(run.id, version, selected)
    if not specs.candidates:
        st.caption("Charts appear with the first round.")
        return
    speed, roof, tree = st.tabs(["Speedup", "Roofline", "Search tree"], key="chart_tabs")
    with speed:
        if specs.speedup:
            st.vega_lite_chart(specs.speedup, width="stretch", key="speedup_chart")
        else:
            st.caption("No speedup yet: a speedup needs a candidate that ran and was correct. "
                       + _not_run_words(run))
        st.vega_lite_chart(specs.strip, width="stretch", key="strip_chart")
        if specs.speedup_note:
            st.caption(specs.speedup_note)
    with roof, shown_errors("draw the roofline"):
        _roofline(run, version, selected)
    with tree:
        st.vega_lite_chart(specs.tree, width="stretch", key="tree_chart")
        if specs.tree_note:
            st.caption(specs.tree_note)


def _not_run_words(run: RunSummary) -> str:
    """Why rounds may have no speed, in the terms of the device the run is on (a CPU run's rounds are C code
    that ran, or CUDA that could only be compiled; a CPU timeout is not CUDA's doing)."""
    if run.device in (None, "cpu") or str(run.device).lower().startswith("cpu"):
        return ("This run is on the CPU: its C candidates run (see each round's verdict for why one did not), "
                "its CUDA candidates are compiled and analysed only (needs_gpu), and a CPU run has no GPU roofline.")
    return "See each round's verdict for why a candidate did not run or was not correct."


def _roofline(run: RunSummary, version: tuple, selected: int | None) -> None:
    key = f"roof_cfg_{run.id}"
    view = run_charts.roofline_view(run.id, version, selected, run.problem_slug, run.device,
                                    st.session_state.get(key))
    if view.spec is None:
        st.info("No roofline yet: it needs GPU candidates that ran and were timed. " + _not_run_words(run),
                icon=":material/insights:")
        return
    if st.session_state.get(key) not in view.configs:
        st.session_state[key] = view.config
    st.selectbox("Configuration", view.configs, key=key)
    if view.bandwidth_only:
        st.caption("This problem does no floating-point work, so its only roof is DRAM bandwidth.")
    st.vega_lite_chart(view.spec, width="stretch", key="roofline_chart")
    st.caption(view.caption)
