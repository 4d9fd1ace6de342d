"""UI pieces of the Label and Ranker pages: code panes, evidence, vote bar, agreement and ranker charts.

Pages stay flat scripts; what they draw comes from here, and what they write goes through
`engine.rank.labeling`. Widget state lives under `label_*` / `ranker_*` session keys.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import pandas as pd
import streamlit as st

from app.components.code import diff_html, highlight_html, unified_diff
from app.components.style import fmt_number, fmt_speedup, fmt_us, verdict_markdown
from db.labels import CandidateEvidence, LabelerRow, RankerModelRow, SessionRow
from engine.rank import labeling
from engine.rank.agreement import AgreementReport

KEY_DIAGNOSTICS = ("registers", "spills", "smem_bytes", "occupancy", "coalescing_sectors_per_request",
                   "vector_width", "sync_in_loop", "uses_tensor_cores")
VOTE_BUTTONS = (  # choice, label, shortcut (C and R are Streamlit's own)
    ("a", "A better", "A"), ("b", "B better", "B"), ("tie", "Tie", "T"), ("both_bad", "Both bad", "N"),
    ("skip", "Skip", "S"),
)
QUEUE_HELP = {
    "uncertain": "pairs the current ranker is least sure about",
    "disagreement": "pairs where the ranker contradicts the measurement",
    "new-problems": "problems with the fewest labels first",
    "random": "any pair",
}


def pair_diff_html(a: str, b: str) -> str:
    diff = unified_diff(a, b, "A", "B")
    return diff_html(diff) if diff else "<p>The two sources are identical.</p>"


def evidence_lines(item: CandidateEvidence) -> list[str]:
    """Verdict, speed and the key static diagnostics, one short line each."""
    lines = [verdict_markdown(item.verdict) + (" :orange-badge[flagged for review]" if item.flagged else "")]
    if item.speedup is not None or item.candidate_us is not None:
        lines.append(f"**speedup** {fmt_speedup(item.speedup)} · {fmt_us(item.candidate_us)} on {item.device or '?'}")
    shown = [f"{k} {fmt_number(item.features[k])}" for k in KEY_DIAGNOSTICS if k in item.features]
    if shown:
        lines.append("**static** " + " · ".join(shown))
    if item.bottleneck:
        lines.append(f"**bottleneck** {item.bottleneck}")
    return lines


def render_candidate(side: str, item: CandidateEvidence, blind: bool) -> None:
    st.subheader(f"{side} · #{item.id}")
    if not blind:
        st.caption(f"{item.origin} · {item.strategy or 'no strategy tag'} · {item.language}")
        for line in evidence_lines(item):
            st.markdown(line)
    st.html(highlight_html(item.source, item.language))


def render_pair(pair: labeling.PairView, blind: bool) -> None:
    st.caption(f"{pair.a.problem_slug} · chosen by: {pair.reason or 'queue'}"
               + (" · blind: verdicts, speed and diagnostics hidden" if blind else ""))
    side_by_side, diff = st.tabs(["Side by side", "Diff A → B"])
    with side_by_side:
        left, right = st.columns(2)
        with left:
            render_candidate("A", pair.a, blind)
        with right:
            render_candidate("B", pair.b, blind)
    with diff:
        st.html(pair_diff_html(pair.a.source, pair.b.source))


def sign_in_form() -> LabelerRow | None:
    """The sign-in form; returns the labeler once signed in (kept in session state)."""
    with st.form("label_sign_in"):
        name = st.text_input("Your name", key="label_name")
        password = (st.text_input("Team password", type="password", key="label_password")
                    if labeling.password_required() else None)
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        try:
            st.session_state["label_labeler"] = labeling.sign_in(name, password)
        except labeling.SignInError as exc:
            st.error(str(exc))
        finally:
            st.session_state.pop("label_password", None)
    return st.session_state.get("label_labeler")


def session_sidebar(labeler: LabelerRow, problems: Sequence[str]) -> SessionRow | None:
    """Queue, blind mode and problem filter; a new session starts on request."""
    with st.sidebar:
        st.markdown(f"Signed in as **{labeler.name}**")
        queue = st.selectbox("Queue", list(QUEUE_HELP), key="label_queue", format_func=lambda q: q,
                             help="; ".join(f"{k}: {v}" for k, v in QUEUE_HELP.items()))
        if warning := labeling.queue_warning(queue):
            st.warning(warning, icon=":material/shuffle:")
        blind = st.toggle("Blind (label from code alone)", key="label_blind")
        problem = st.selectbox("Problem", ["(all)", *problems], key="label_problem")
        st.number_input("Session goal", min_value=1, max_value=1000, value=20, key="label_goal")
        if st.button("Start new session", key="label_start", type="primary"):
            session = labeling.start_session(labeler.id, queue, blind, None if problem == "(all)" else problem)
            st.session_state["label_session"] = session
            st.session_state["label_pair"] = None
        if st.button("Sign out", key="label_sign_out"):
            current = st.session_state.get("label_session")
            if current:
                labeling.finish_session(current.id)
            for key in ("label_labeler", "label_session", "label_pair"):
                st.session_state.pop(key, None)
            st.rerun()
    return st.session_state.get("label_session")


def current_pair(session: SessionRow) -> labeling.PairView | None:
    """The pair on screen: kept across reruns until voted on, drawn from the queue otherwise."""
    shown = st.session_state.get("label_pair")
    if shown:
        return labeling.show_pair(session.id, shown[0], shown[1], shown[2])
    pair = labeling.next_pair(session.id)
    st.session_state["label_pair"] = (pair.a.id, pair.b.id, pair.reason) if pair else None
    return pair


def _vote(session_id: int, a_id: int, b_id: int, choice: str) -> None:
    try:
        labeling.vote(session_id, a_id, b_id, choice, st.session_state.get("label_tags") or [],
                      st.session_state.get("label_note") or "")
    except labeling.VoteError as exc:
        st.session_state["label_error"] = str(exc)
        return
    st.session_state["label_last"] = f"{labeling.CHOICE_LABELS[choice]} recorded for #{a_id} vs #{b_id}"
    st.session_state["label_pair"] = None
    st.session_state["label_tags"] = []
    st.session_state["label_note"] = ""


def _undo(session_id: int) -> None:
    row = labeling.undo_last(session_id)
    if row is None:
        st.session_state["label_last"] = "nothing to undo in this session"
        return
    st.session_state["label_pair"] = (row.candidate_a_id, row.candidate_b_id, "undo")
    st.session_state["label_tags"] = list(row.tags)
    st.session_state["label_note"] = row.note
    st.session_state["label_last"] = f"undid {labeling.CHOICE_LABELS.get(row.choice, row.choice)} on " \
                                     f"#{row.candidate_a_id} vs #{row.candidate_b_id}"


def vote_bar(session: SessionRow, pair: labeling.PairView | None) -> None:
    """Rationale tags, a note, the five choices and undo, each with a keyboard shortcut."""
    if pair is not None:
        st.pills("Why", labeling.RATIONALE_TAGS, selection_mode="multi", key="label_tags")
        st.text_input("Note", key="label_note", placeholder="optional: what decided it")
    columns = st.columns(len(VOTE_BUTTONS) + 1)
    for column, (choice, text, key) in zip(columns, VOTE_BUTTONS, strict=False):
        column.button(f"{text} ({key})", key=f"label_vote_{choice}", shortcut=key, disabled=pair is None,
                      on_click=_vote, args=(session.id, pair.a.id, pair.b.id, choice) if pair else None,
                      type="primary" if choice in ("a", "b") else "secondary")
    columns[-1].button("Undo (U)", key="label_undo", shortcut="U", on_click=_undo, args=(session.id,))
    if message := st.session_state.pop("label_error", None):
        st.error(message)
    if message := st.session_state.pop("label_last", None):
        st.caption(message)


def progress(session: SessionRow, goal: int) -> None:
    done = labeling.session_progress(session.id)
    st.progress(min(1.0, done.votes / goal) if goal else 0.0,
                text=f"{done.labelled} labelled, {done.skipped} skipped of a goal of {goal} in session #{session.id}")


def percent(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f} %"


def number(value: float | None) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def agreement_frame(report: AgreementReport) -> pd.DataFrame:
    return pd.DataFrame([{"labeler": r.name, "votes": r.votes, "overlap pairs": r.overlap_pairs,
                          "kappa": r.kappa, "measured votes": r.measured_votes,
                          "agrees with measurement": percent(r.measured_agreement), "training weight": r.weight}
                         for r in report.labelers])


def agreement_panel(report: AgreementReport) -> None:
    cols = st.columns(4)
    cols[0].metric(f"Cohen's κ (overall, {report.overlap_pairs} pairs)",
                   "–" if report.overall_kappa is None else f"{report.overall_kappa:.2f}")
    cols[1].metric("Overlapping pairs", report.overlap_pairs)
    cols[2].metric("Agreement with measurement", percent(report.measured_agreement))
    cols[3].metric("Left side chosen", percent(report.left_share), help="of A/B votes; far from 50 % = position bias")
    if report.kappa_caveat:
        st.caption(f":material/warning: κ {report.kappa_caveat}.")
    if report.labelers:
        st.dataframe(agreement_frame(report), hide_index=True, key="label_agreement")


# Ranker page ------------------------------------------------------------------------------------

def versions_frame(rows: Sequence[RankerModelRow]) -> pd.DataFrame:
    out = []
    for row in rows:
        held = row.metrics.get("heldout") or {}
        by_source = held.get("by_source", {})
        out.append({"version": row.version, "created": row.created_at, "features": len(row.feature_names),
                    "train pairs": sum(row.data.get("pairs", {}).get("train", {}).values()),
                    "held-out problems": len(row.data.get("heldout_problems", [])),
                    "measured accuracy": by_source.get("measured", {}).get("accuracy"),
                    "human accuracy": by_source.get("human", {}).get("accuracy"),
                    "AUC": held.get("all", {}).get("auc"), "ECE": held.get("ece")})
    return pd.DataFrame(out)


def baselines_frame(report: dict) -> pd.DataFrame:
    rows = []
    for source in ("measured", "human"):
        block = report.get("by_source", {}).get(source)
        if not block:
            continue
        row = {"pairs": source, "n": block["pairs"], "ranker": block["accuracy"]}
        for name, entry in report.get("baselines", {}).items():
            row[name.replace("_", " ")] = entry.get(source)
        rows.append(row)
    return pd.DataFrame(rows)


def curve_chart(curve: Sequence[dict]) -> alt.Chart:
    frame = pd.DataFrame(curve)
    value_vars = [c for c in ("train_loss", "heldout_loss", "heldout_accuracy") if c in frame]
    long = frame.melt(id_vars="epoch", value_vars=value_vars, var_name="series", value_name="value")
    return alt.Chart(long).mark_line(point=True).encode(x="epoch:Q", y="value:Q", color="series:N",
                                                        tooltip=["epoch", "series", "value"])


def importance_chart(rows: Sequence[dict]) -> alt.Chart:
    frame = pd.DataFrame(rows)
    frame["effect"] = frame["direction"].map(lambda d: "more → ranked better" if d > 0 else "more → ranked worse")
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("loss_increase:Q", title="loss increase when shuffled"), y=alt.Y("feature:N", sort="-x"),
        color="effect:N", tooltip=["feature", "loss_increase", "accuracy_drop", "direction"])


def calibration_chart(bins: Sequence[dict]) -> alt.Chart:
    frame = pd.DataFrame(bins)
    diagonal = alt.Chart(pd.DataFrame({"x": [0.0, 1.0]})).mark_line(strokeDash=[4, 4], color="gray").encode(
        x="x:Q", y="x:Q")
    points = alt.Chart(frame).mark_circle().encode(
        x=alt.X("predicted:Q", title="predicted P(a better)", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("observed:Q", title="observed share", scale=alt.Scale(domain=[0, 1])), size="count:Q",
        tooltip=["predicted", "observed", "count"])
    return diagonal + points
