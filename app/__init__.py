"""The Streamlit dashboard: `main.py` is the entry point, `views/` the page scripts (thin; listed by
`st.navigation`), and `components/` the parts they are built from (views, charts, cached reads, the event watcher)."""
