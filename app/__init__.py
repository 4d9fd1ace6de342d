"""The Streamlit dashboard: `main.py` is the entry point, `pages/` the page scripts (thin), and
`components/` the parts they are built from (views, charts, cached reads, the event watcher)."""
