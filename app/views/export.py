"""Export: choose a dataset kind, format and filters, preview it, write it, download it."""

import streamlit as st

from app.components import export_view
from app.components.errors import shown_errors

st.title("Export")
st.caption("Ranked datasets for reward-model, DPO, SFT and RL training, streamed to JSONL or Parquet with a "
           "dataset card. Hidden input configurations never appear in a prompt.")
kind, fmt, out, filters = export_view.form()
with shown_errors("preview the export"):
    export_view.preview(kind, filters)
if st.button("Export", type="primary", icon=":material/ios_share:", key="export_go"):
    with shown_errors("export the dataset"):
        export_view.run_export(kind, fmt, out, filters)
with shown_errors("list earlier exports"):
    export_view.history()
