"""The Problems page's parts: filtering the library and one problem's card (importing is `import_view`).

Filtering is pure (tested without Streamlit). What an import noticed (configurations replaced or dropped, inputs
it could not translate, outputs whose values are rounding) is kept with the problem and shown on its card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from app.components.code import show_code
from engine.problems import Problem

# Buckets of the largest configuration's minimum DRAM traffic: how big a problem is to a GPU.
SIZE_BUCKETS: dict[str, tuple[float, float]] = {
    "small (< 64 MB)": (0, 64e6),
    "medium (64 MB – 1 GB)": (64e6, 1e9),
    "large (≥ 1 GB)": (1e9, float("inf")),
}


@dataclass(frozen=True)
class ProblemFilter:
    text: str = ""
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    cpu_only: bool = False  # only problems whose rounds run without a GPU


def largest_bytes(problem: Problem) -> float | None:
    try:
        return problem.min_bytes(problem.largest_config)
    except Exception:  # noqa: BLE001 - a bad model expression only costs the size filter
        return None


def size_bucket(problem: Problem) -> str | None:
    nbytes = largest_bytes(problem)
    if nbytes is None:
        return None
    return next((name for name, (lo, hi) in SIZE_BUCKETS.items() if lo <= nbytes < hi), None)


def matches(problem: Problem, flt: ProblemFilter) -> bool:
    words = flt.text.lower().split()
    haystack = " ".join([problem.slug, problem.title, problem.description, *problem.tags]).lower()
    return (all(w in haystack for w in words)
            and (not flt.kinds or problem.kind in flt.kinds)
            and (not flt.tags or set(flt.tags) <= set(problem.tags))
            and (not flt.sizes or size_bucket(problem) in flt.sizes)
            and (not flt.cpu_only or problem.runs_on_cpu))


def filter_problems(problems: Sequence[Problem], flt: ProblemFilter) -> list[Problem]:
    return [p for p in problems if matches(p, flt)]


def problems_frame(problems: Sequence[Problem]) -> pd.DataFrame:
    rows = []
    for p in problems:
        nbytes = largest_bytes(p)
        rows.append({"slug": p.slug, "title": p.title, "kind": p.kind, "tags": ", ".join(p.tags),
                     "configs": f"{len(p.visible_configs)} + {len(p.hidden_configs)} hidden",
                     "largest": f"{nbytes / 1e6:,.0f} MB" if nbytes else "–",
                     "implementations": len(p.implementations), "runs on the CPU": p.runs_on_cpu,
                     "source": p.source})
    columns = ["slug", "title", "kind", "tags", "configs", "largest", "implementations", "runs on the CPU", "source"]
    return pd.DataFrame(rows, columns=columns)


def configs_frame(problem: Problem) -> pd.DataFrame:
    """The visible configurations with their analytical work: hidden ones are only counted."""
    rows = []
    for config in problem.visible_configs:
        flops, nbytes = problem.flops(config), problem.min_bytes(config)
        ai = problem.arithmetic_intensity(config)
        rows.append({"configuration": config.name, "params": ", ".join(f"{k}={v}" for k, v in config.params.items()),
                     "GFLOP": f"{flops / 1e9:.3g}" if flops else "0" if flops == 0 else "–",
                     "min MB": f"{nbytes / 1e6:.3g}" if nbytes else "–", "FLOP/byte": f"{ai:.3g}" if ai else "–"})
    return pd.DataFrame(rows)


def filters(problems: Sequence[Problem]) -> ProblemFilter:
    """Search box and filter widgets; they keep their values across page switches."""
    kinds = sorted({p.kind for p in problems})
    tags = sorted({t for p in problems for t in p.tags})
    cols = st.columns([3, 2, 3, 2])
    text = cols[0].text_input("Search", placeholder="slug, title, description or tag", key="pf_text",
                              persist_state="session")
    chosen_kinds = cols[1].multiselect("Kind", kinds, key="pf_kind", persist_state="session")
    chosen_tags = cols[2].multiselect("Tags", tags, key="pf_tags", persist_state="session")
    sizes = cols[3].multiselect("Size", list(SIZE_BUCKETS), key="pf_size", persist_state="session",
                                help="Minimum DRAM traffic of the largest configuration.")
    cpu_only = st.toggle("Only problems that run on the CPU", key="pf_cpu", persist_state="session",
                         help="Problems shipping CPU implementations: their rounds run on a machine without a GPU "
                              "(CUDA candidates there are compiled and analysed, never run).")
    return ProblemFilter(text or "", tuple(chosen_kinds), tuple(chosen_tags), tuple(sizes), bool(cpu_only))


def problem_card(problem: Problem) -> None:
    st.subheader(problem.title)
    with st.container(horizontal=True, gap="small"):
        st.badge(problem.kind, color="blue", icon=":material/code:")
        st.badge(problem.source, color="gray", icon=":material/inventory_2:")
        st.badge(problem.dtype, color="gray")
        for tag in problem.tags:
            st.badge(tag, color="primary")
    if problem.description:
        st.markdown(problem.description)
    rtol, atol = problem.tolerance
    st.caption(f"Slug `{problem.slug}` · tolerance rtol {rtol:g}, atol {atol:g} · folder `{problem.folder}`")
    import_notes(problem, expanded=False)
    st.markdown("**Visible configurations**")
    st.dataframe(configs_frame(problem), hide_index=True, width="stretch")
    if problem.hidden_configs:
        st.caption(f"{len(problem.hidden_configs)} hidden configuration(s) are checked on every candidate "
                   "but never shown in a prompt.")
    st.markdown(f"**Reference** · `{problem.reference_path.name}`")
    show_code(problem.reference_source, "python" if problem.kind == "pytorch" else "c", height=460)
    if problem.implementations:
        st.markdown("**Shipped implementations** (what the library proposer starts from)")
        st.dataframe(pd.DataFrame([{"name": i.name, "strategy": i.strategy, "device": i.device,
                                    "tunables": ", ".join(i.tunables), "summary": i.summary}
                                   for i in problem.implementations]), hide_index=True, width="stretch")


def import_notes(problem: Problem, expanded: bool = True) -> None:
    """What the problem's import found: warnings (what limits judging candidates) in full, then its notes."""
    for warning in problem.warnings:
        st.warning(warning, icon=":material/warning:")
    if problem.notes:
        with st.expander(f"What the import noticed ({len(problem.notes)})", expanded=expanded,
                         icon=":material/info:"):
            st.markdown("\n".join(f"- {note}" for note in problem.notes))
