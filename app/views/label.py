"""Label: sign in, draw pairs of one problem's candidates from a queue, vote with the keyboard."""

import streamlit as st

from app.components import labeling as ui
from app.components.errors import shown_errors
from db.labels import list_problem_slugs
from engine.rank.agreement import agreement_report

st.title("Label pairs")
st.caption("Which of two candidates for the same problem is the better kernel? Keys: A, B, T (tie), N (both bad), "
           "S (skip), U (undo).")
labeler = st.session_state.get("label_labeler") or ui.sign_in_form()
if labeler is None:
    st.stop()

session = ui.session_sidebar(labeler, list_problem_slugs())
if session is None:
    st.info("Choose a queue in the sidebar and start a session.", icon=":material/play_arrow:")
else:
    with shown_errors("draw the next pair"):
        pair = ui.current_pair(session)
        if pair is None:
            st.success("Nothing left in this queue for you: every pair is labelled or there are too few candidates.",
                       icon=":material/done_all:")
        else:
            ui.render_pair(pair, blind=session.blind)
        ui.vote_bar(session, pair)
        ui.progress(session, int(st.session_state.get("label_goal", 20)))

with st.expander("Agreement", icon=":material/groups:"), shown_errors("compute agreement"):
    ui.agreement_panel(agreement_report())
