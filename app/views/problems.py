"""Problems: browse and filter the library, read a reference and its configurations, import more."""

import streamlit as st

from app.components import data, import_view, problems_view
from app.components.errors import shown_errors

st.title("Problems")
scan = data.library()
browse, importing = st.tabs(["Library", "Import"], key="problems_tabs")

with browse:
    if scan.errors:
        with st.expander(f"{len(scan.errors)} problem folder(s) did not load", icon=":material/warning:"):
            for error in scan.errors:
                st.error(f"**{error.path}**: {error.cause}")
    flt = problems_view.filters(scan.problems)
    found = problems_view.filter_problems(scan.problems, flt)
    st.caption(f"{len(found)} of {len(scan.problems)} problems")
    if not found:
        st.info("No problem matches these filters.", icon=":material/search_off:")
    else:
        table = st.dataframe(problems_view.problems_frame(found), hide_index=True, width="stretch",
                             key="problems_table", on_select="rerun", selection_mode="single-row")
        rows = table["selection"]["rows"] if table else []
        problem = found[rows[0] if rows and rows[0] < len(found) else 0]
        with st.container(border=True):
            with shown_errors(f"show problem {problem.slug}"):
                problems_view.problem_card(problem)
            if st.button("New run on this problem", type="primary", icon=":material/rocket_launch:",
                         key="run_this"):
                st.switch_page("views/new_run.py", query_params={"problem": problem.slug})

with importing:
    st.caption("KernelBench files are copied unchanged and get configurations derived from their batch size, "
               "one of them hidden. Each import runs the problem's code in the sandbox at every configuration: a C "
               "program for real; a PyTorch reference on meta tensors where they suffice (shapes and dtypes, no "
               "values), else on the CPU. The report says which ran how.")
    import_view.import_panel()
