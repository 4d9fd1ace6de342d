"""Ranker: metrics of every stored version against the baselines, its learning curve, what drives it."""

import streamlit as st

from app.components import labeling as ui
from app.components.errors import shown_errors
from engine.rank.bt import bradley_terry_orders
from engine.rank.store import list_rankers

st.title("Ranker")
st.caption("A pairwise scorer trained on measured pairs (correct, >= 10 % apart) and human votes, judged on "
           "problems it never saw. `refinery rank train` makes a new version.")
if st.button("Train a new version", key="ranker_train", icon=":material/model_training:"):
    with shown_errors("train a ranker"), st.spinner("Training…", show_time=True):
        from engine.rank.training import train

        st.success(f"Stored ranker v{train().version}.", icon=":material/check:")

rows = list_rankers()
if not rows:
    st.info("No ranker trained yet.", icon=":material/leaderboard:")
    st.stop()

st.dataframe(ui.versions_frame(rows), hide_index=True, key="ranker_versions")
version = st.selectbox("Version", [r.version for r in reversed(rows)], format_func=lambda v: f"v{v}",
                       key="ranker_version")
row = next(r for r in rows if r.version == version)
held = row.metrics.get("heldout")
if not held:
    st.warning("This version held out no problem, so it has no held-out metrics.", icon=":material/warning:")
else:
    measured = held.get("by_source", {}).get("measured", {})
    within = held.get("within_problem", {})
    ranked = held.get("all", {})
    cols = st.columns(4)
    cols[0].metric("Accuracy, pairs >= 10 % apart", ui.percent(measured.get("accuracy")),
                   help=f"on the {measured.get('pairs', 0):,} measured held-out pairs")
    cols[1].metric("AUC, all held-out pairs", ui.number(ranked.get("auc")),
                   help=f"on all {ranked.get('pairs', 0):,} held-out pairs, measured and human together")
    cols[2].metric("Calibration error (ECE)", ui.number(held.get("ece")))
    cols[3].metric("Kendall τ within problem", ui.number(within.get("kendall_tau")))
    st.caption(f"Measured when v{version} was trained, on the {ranked.get('pairs', 0):,} pairs (measured and "
               f"human) of the {len(row.data.get('heldout_problems', []))} problem(s) it held out. "
               f"`refinery rank eval --version {version}` measures the same pairs again on today's data: its "
               "“all (measured + human)” row is this AUC."
               + (" This version was refit on every problem afterwards, so only these stored numbers are held out."
                  if row.data.get("refit_all") else ""))
    st.subheader("Against the baselines")
    st.dataframe(ui.baselines_frame(held), hide_index=True, key="ranker_baselines")
    if held.get("calibration"):
        st.altair_chart(ui.calibration_chart(held["calibration"]), key="ranker_calibration")
st.subheader("Learning curve")
if row.metrics.get("curve"):
    st.altair_chart(ui.curve_chart(row.metrics["curve"]), key="ranker_curve")
st.subheader("What drives it")
if row.metrics.get("importance"):
    st.altair_chart(ui.importance_chart(row.metrics["importance"]), key="ranker_importance")

st.subheader("Bradley–Terry order of a problem")
problems = sorted(set(row.data.get("train_problems", [])) | set(row.data.get("heldout_problems", [])))
if problems:
    slug = st.selectbox("Problem", problems, key="ranker_bt_problem")
    with shown_errors(f"order the candidates of {slug}"):
        orders = bradley_terry_orders(slug)
        st.dataframe([{"target": target, "rank": k, "candidate": cid, "strength": round(s, 3)}
                      for target, order in orders.items() for k, (cid, s) in enumerate(order, start=1)],
                     hide_index=True, key="ranker_bt")
