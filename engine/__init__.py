"""Kernel Refinery's engine: problems, builds, verification, analysis, proposers, search, ranking, export.

Nothing here imports Streamlit; the dashboard and the CLI are thin layers over these modules.
"""
