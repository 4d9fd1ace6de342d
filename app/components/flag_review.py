"""A flagged result's review, where the user looks at the round: why it was flagged, and a person's
decision (clear: the speed is real and is paid; reject: not real). Until then it earns no speed reward
and enters no dataset, which the panel says."""

from __future__ import annotations

import streamlit as st

from db.queries import EvaluationView
from engine.reward.score import counted_reward


def shown_reward(ev: EvaluationView) -> tuple[float | None, float | None]:
    """(the reward that counts now, the speed term held aside) for every page that shows an evaluation's
    reward, so the number beside a flag's banner is the one the banner describes."""
    total, components = counted_reward(ev.reward, ev.reward_components, ev.flagged, ev.flag_review)
    return total, components.get("speed_held")


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def flag_panel(ev: EvaluationView) -> None:
    reason = ev.timing.flag_reason or "implausible speedup"
    reward, held = shown_reward(ev)
    if ev.flag_review == "cleared":
        st.success(f"Flag cleared by {ev.flag_reviewer}: {ev.flag_review_note or 'no note'}. Its speed reward is "
                   f"paid (reward {_fmt(reward)}). Flagged because: {reason}", icon=":material/verified:")
        return
    if ev.flag_review == "rejected":
        st.error(f"Flag upheld by {ev.flag_reviewer}: the speedup is not real; scored as a cheat (reward "
                 f"{_fmt(reward)}). {ev.flag_review_note or ''}", icon=":material/gpp_bad:")
        return
    st.warning(f"Flagged for review: {reason}. It earns no speed reward (reward {_fmt(reward)} without it; speed "
               f"term {_fmt(held)} held) and enters no dataset or ranker until a person clears it.",
               icon=":material/flag:")
    signed_in = st.session_state.get("label_labeler")
    with st.form(f"flag_review_{ev.id}", border=False):
        reviewer = st.text_input("Reviewer", value=getattr(signed_in, "name", ""), key=f"flag_reviewer_{ev.id}")
        note = st.text_input("Why (stored with the decision)", key=f"flag_note_{ev.id}")
        clear, reject = st.columns(2)
        cleared = clear.form_submit_button("Clear: the speedup is real", icon=":material/check:")
        rejected = reject.form_submit_button("Reject: not real", icon=":material/close:")
    if cleared or rejected:
        from engine.reward.review import review_flag

        try:
            review_flag(ev.id, "cleared" if cleared else "rejected", reviewer, note)
        except ValueError as exc:
            st.error(str(exc))
            return
        from app.components import data, run_charts

        data.forget_reviews()
        run_charts.chart_specs.clear()  # the best-so-far line leaves out what a person rejected
        st.rerun()
