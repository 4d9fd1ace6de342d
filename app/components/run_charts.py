"""The Run page's charts as Vega-Lite specs, cached on the run's fingerprint and the selection.

Building a chart of thousands of points costs a second or more (shaping, then serialising the
data into the spec), so the finished spec is what is cached: a live rerun with nothing new, or a
page switch and back, reuses it; a new round or another selected candidate builds it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import streamlit as st

from app.components import chartdata, charts, data
from engine.analysis import DeviceCeilings


@dataclass(frozen=True)
class ChartSpecs:
    candidates: int
    speedup: dict | None = None
    strip: dict | None = None
    speedup_note: str | None = None
    tree: dict | None = None
    tree_note: str | None = None


@dataclass(frozen=True)
class RooflineView:
    configs: list[str] = field(default_factory=list)
    config: str | None = None
    spec: dict | None = None
    bandwidth_only: bool = False
    caption: str = ""


@st.cache_data(max_entries=32, show_spinner="Drawing the charts…")
def chart_specs(run_id: int, version: tuple, selected: int | None) -> ChartSpecs:
    points = chartdata.rounds_frame(data.run_points(run_id, version))
    if points.empty:
        return ChartSpecs(candidates=0)
    keep = [selected] if selected else []
    shown = chartdata.thin(points, keep)
    timed = bool(points["speedup"].notna().any())
    best = chartdata.best_so_far(points, data.run_pooled(run_id, version)) if timed else None
    speed = charts.speedup_chart(shown, best, selected) if timed else None
    strip = charts.verdict_strip(shown)
    speed_note = (f"Showing {len(shown)} of {len(points)} candidates: the best of each round and an even spread "
                  "of the rest." if len(shown) < len(points) else None)
    subset = chartdata.tree_subset(points, selected)
    nodes, edges = chartdata.tree_layout(subset)
    tree = charts.tree_chart(nodes, edges, selected)
    tree_note = (f"Showing {len(subset)} of {len(points)} nodes: the selected and best candidates, the newest, "
                 "and their ancestors." if len(subset) < len(points) else None)
    return ChartSpecs(len(points), speed, strip, speed_note, tree, tree_note)


def _ceiling_words(c: DeviceCeilings) -> str:
    parts = [f"{c.name} ({c.source})"]
    if c.dram_bandwidth:
        parts.append(f"DRAM {c.dram_bandwidth / 1e12:.2f} TB/s")
    parts += [f"{p} {v / 1e12:.0f} TFLOP/s" for p, v in sorted(c.peaks.items(), key=lambda kv: kv[1])]
    return ", ".join(parts)


@st.cache_data(max_entries=32, show_spinner="Drawing the roofline…")
def roofline_view(run_id: int, version: tuple, selected: int | None, problem_slug: str, device: str | None,
                  config: str | None = None) -> RooflineView:
    """Stored roofline diagnostics if the run has them, else the problem's model over measured times."""
    entries = data.run_roofline(run_id, version)
    frame, origin = chartdata.roofline_frame(entries), "stored roofline diagnostics"
    problem = data.problem(problem_slug)
    if frame.empty and problem is not None:
        frame = chartdata.model_roofline_frame(data.run_timings(run_id, version), problem)
        origin = "the problem's analytical model over measured times"
    if frame.empty:
        return RooflineView()
    configs = list(dict.fromkeys(frame["config"]))
    if config not in configs:
        largest = problem.largest_config.name if problem else None
        config = largest if largest in configs else configs[-1]
    frame = chartdata.thin(frame[frame["config"] == config], [selected] if selected else [], score="gflops")
    ceilings = chartdata.run_ceilings(entries, device)
    bandwidth_only = not (frame["ai"].notna().any() and frame["gflops"].notna().any())
    chart = (charts.bandwidth_chart if bandwidth_only else charts.roofline_chart)(frame, ceilings, selected)
    caption = ("Roofs: " + "; ".join(_ceiling_words(c) for c in ceilings) + f". Points from {origin}."
               if ceilings else f"No ceilings known for device “{device or 'unknown'}”: points only, from {origin}.")
    return RooflineView(configs, config, chart, bandwidth_only, caption)
