"""Flags: every open flag (an implausible speedup re-measured and held for review) with its evidence and
the review buttons, so a person can work through them in one place."""

import streamlit as st

from app.components.flag_review import flag_panel, shown_reward
from app.components.style import fmt_speedup
from db.evaluations import list_flags
from db.queries import get_evaluation

st.title("Flags")
st.caption("Results held for review: each earns no speed reward and enters no dataset, ranker or best result "
           "until a person clears it; a rejected one is scored as a cheat.")
flags = list_flags(awaiting_only=True)
if not flags:
    st.success("No open flags: every flagged result has been reviewed.", icon=":material/verified:")
for flag in flags:
    ev = get_evaluation(flag.evaluation_id)
    if ev is None:
        continue
    with st.container(border=True, key=f"flag_{flag.evaluation_id}"):
        st.markdown(f"**{flag.problem_slug}** · candidate #{flag.candidate_id} · run #{flag.run_id} · "
                    f"{flag.device or 'unknown device'}")
        cols = st.columns(3)
        cols[0].metric("Speedup claimed", fmt_speedup(flag.speedup))
        reward, held = shown_reward(ev)
        cols[1].metric("Reward that counts now", "–" if reward is None else f"{reward:.3f}",
                       help="The speed term is held aside until a person clears the flag")
        cols[2].metric("Speed term held", "–" if held is None else f"{held:.3f}")
        for note in ev.timing.noisy_host_notes:
            st.warning(note, icon=":material/speed:")
        with st.expander("Evidence: the timing record and the log"):
            st.json(ev.timing.model_dump(mode="json", exclude_defaults=True), expanded=False)
            if ev.log:
                st.code(ev.log[-3000:], language=None)
        flag_panel(ev)
