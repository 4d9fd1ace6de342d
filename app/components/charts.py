"""Altair charts of a run: speedup over rounds, the verdict strip, the roofline, the search tree.

A live view redraws its charts with every round, and building an Altair chart and turning it into
Vega-Lite costs a few hundred milliseconds of Python each time, which on a busy machine holds up
the round itself on its way to the browser. So each chart is built once per *shape* (which
verdicts appear, which layers there are) against named datasets, cached as a Vega-Lite dict, and
each redraw only pours the current rows into it (`render`).

The verdict colour scale is shared so a point means the same in every chart; the selected
candidate is drawn larger, ringed, on top.
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence

import altair as alt
import pandas as pd

from app.components.chartdata import roof_lines
from app.components.style import PRIMARY, VERDICT_COLORS, VERDICT_ORDER
from engine.analysis import DeviceCeilings

VERDICT_LEGEND = alt.Legend(title="verdict", orient="bottom", columns=5, symbolType="circle")
STRIP_LEGEND = alt.Legend(title=None, orient="right", symbolType="circle")
RING = {"filled": False, "strokeWidth": 2.5, "color": "#111827"}
_TOOLTIP = [alt.Tooltip("candidate_id:Q", title="candidate"), alt.Tooltip("step:Q", title="round"),
            alt.Tooltip("verdict_words:N", title="verdict"), alt.Tooltip("strategy:N", title="strategy")]
ROUND_X = alt.X("step:Q", title="round", axis=alt.Axis(tickMinStep=1, format="d"))


def present_verdicts(*frames: pd.DataFrame) -> tuple[str, ...]:
    present = set().union(*(set(f["verdict"]) for f in frames if "verdict" in f))
    return tuple(v for v in VERDICT_ORDER if v in present) or ("pending",)


def verdict_color(verdicts: Sequence[str], legend: alt.Legend | None = VERDICT_LEGEND) -> alt.Color:
    """Colour by verdict with the shared palette, the legend listing only the verdicts present."""
    domain = list(verdicts)
    return alt.Color("verdict:N", scale=alt.Scale(domain=domain, range=[VERDICT_COLORS[v] for v in domain]),
                     legend=legend)


def _records(frame: pd.DataFrame | None) -> list[dict]:
    """Rows as JSON-ready dicts: NaN becomes null, numpy scalars plain Python."""
    if frame is None or frame.empty:
        return []
    clean = frame.astype(object).where(frame.notna(), None)
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in clean.to_dict("records")]


def render(template: dict, datasets: dict[str, pd.DataFrame | None], **top: object) -> dict:
    """A copy of a cached spec with its named datasets filled and top-level properties set."""
    spec = copy.deepcopy(template)  # small (no data), and Streamlit may adjust the spec it is given
    spec["datasets"] = {name: _records(frame) for name, frame in datasets.items()}
    spec.update(top)
    return spec


def _selected(frame: pd.DataFrame, selected: int | None) -> pd.DataFrame:
    return frame[frame["candidate_id"] == selected] if selected is not None else frame.iloc[0:0]


# --- speedup over rounds ----------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def speedup_template(verdicts: tuple[str, ...], height: int = 300) -> dict:
    y = alt.Y("speedup:Q", title="speedup vs baseline (×)", scale=alt.Scale(type="log", nice=False, padding=12))
    one = alt.Chart(alt.Data(values=[{"speedup": 1.0}])).mark_rule(strokeDash=[4, 4], color="#7b8794").encode(y=y)
    best = alt.Chart(alt.Data(name="best")).mark_line(
        interpolate="step-after", color=PRIMARY, strokeWidth=1.5, opacity=0.55).encode(
        x=ROUND_X, y=alt.Y("best:Q"),
        tooltip=[alt.Tooltip("best:Q", format=".3f", title="best so far (pooled median)")])
    points = alt.Chart(alt.Data(name="points")).mark_circle(
        size=110, opacity=0.95, stroke="white", strokeWidth=1.2).encode(
        x=ROUND_X, y=y, color=verdict_color(verdicts, None),
        tooltip=[*_TOOLTIP, alt.Tooltip("speedup:Q", format=".3f", title="speedup")])
    ring = alt.Chart(alt.Data(name="selected")).mark_point(size=260, **RING).encode(x=ROUND_X, y=y)
    return alt.layer(one, best, points, ring).properties(height=height).to_dict(validate=False)


def speedup_chart(frame: pd.DataFrame, best: pd.DataFrame, selected: int | None) -> dict:
    """Speedup of each timed candidate over rounds (log scale), the best so far, 1× marked."""
    timed = frame[frame["speedup"].notna() & (frame["speedup"] > 0)]
    columns = ["candidate_id", "step", "verdict", "verdict_words", "strategy", "speedup"]
    return render(speedup_template(present_verdicts(frame)),
                  {"points": timed[columns], "best": best, "selected": _selected(timed, selected)[columns]})


@functools.lru_cache(maxsize=64)
def strip_template(verdicts: tuple[str, ...]) -> dict:
    return alt.Chart(alt.Data(name="points")).mark_tick(thickness=3, size=14).encode(
        x=ROUND_X,
        y=alt.Y("verdict:N", title=None, sort=list(VERDICT_ORDER), axis=alt.Axis(labels=False, ticks=False)),
        color=verdict_color(verdicts, STRIP_LEGEND), tooltip=_TOOLTIP,
    ).properties(height=70, title=alt.TitleParams("every candidate by verdict", fontSize=11, anchor="start")
                 ).to_dict(validate=False)


def verdict_strip(frame: pd.DataFrame) -> dict:
    """Every candidate as a tick per round, coloured by verdict: the failures the speedup chart omits."""
    columns = ["candidate_id", "step", "verdict", "verdict_words", "strategy"]
    return render(strip_template(present_verdicts(frame)), {"points": frame[columns]})


# --- roofline -----------------------------------------------------------------------------------

_ROOF_TOOLTIP = [alt.Tooltip("candidate_id:Q", title="candidate"), alt.Tooltip("step:Q", title="round"),
                 alt.Tooltip("verdict_words:N", title="verdict"), alt.Tooltip("config:N"),
                 alt.Tooltip("ai:Q", format=".3g", title="FLOP/byte"), alt.Tooltip("gflops:Q", format=".4g"),
                 alt.Tooltip("gbps:Q", format=".4g", title="GB/s"), alt.Tooltip("bound:N"),
                 alt.Tooltip("pct_of_roof:Q", format=".1f", title="% of roof"), alt.Tooltip("bottleneck:N")]


@functools.lru_cache(maxsize=64)
def roofline_template(verdicts: tuple[str, ...], height: int = 380) -> dict:
    x = alt.X("ai:Q", title="arithmetic intensity (FLOP / byte)", scale=alt.Scale(type="log"))
    y = alt.Y("gflops:Q", title="achieved GFLOP/s", scale=alt.Scale(type="log"))
    grey = "#52606d"
    roofs = alt.Chart(alt.Data(name="roofs")).mark_line(strokeWidth=1.6, opacity=0.9, color=grey).encode(
        x=x, y=y, detail="roof:N", tooltip=[alt.Tooltip("roof:N")])
    ends = alt.Chart(alt.Data(name="ends")).mark_text(align="right", dy=-7, fontSize=11, color=grey).encode(
        x=x, y=y, text="roof:N")
    slope = alt.Chart(alt.Data(name="slope")).mark_text(align="left", dy=-14, fontSize=11, color=grey).encode(
        x=x, y=y, text="roof:N")
    points = alt.Chart(alt.Data(name="points")).mark_circle(size=90, opacity=0.9, stroke="white",
                                                            strokeWidth=1).encode(
        x=x, y=y, color=verdict_color(verdicts), tooltip=_ROOF_TOOLTIP)
    ring = alt.Chart(alt.Data(name="selected")).mark_point(size=320, **RING).encode(x=x, y=y)
    return alt.layer(roofs, ends, slope, points, ring).properties(height=height).to_dict(validate=False)


def _memory_label(ceilings: Sequence[DeviceCeilings], roofs: pd.DataFrame) -> pd.DataFrame | None:
    """Where to write the DRAM roof's bandwidth: near the start of its slope."""
    bandwidth = next((c.dram_bandwidth for c in ceilings if c.dram_bandwidth), None)
    if bandwidth is None or roofs.empty:
        return None
    ai = float(roofs["ai"].min()) * 1.4
    return pd.DataFrame([{"ai": ai, "gflops": bandwidth * ai / 1e9, "roof": f"DRAM {bandwidth / 1e12:.2f} TB/s"}])


def roofline_chart(points: pd.DataFrame, ceilings: Sequence[DeviceCeilings], selected: int | None) -> dict:
    """Log-log roofline: the memory roof and a compute roof per precision, candidates by verdict."""
    plotted = points[points["ai"].notna() & points["gflops"].notna() & (points["ai"] > 0)]
    lo = float(plotted["ai"].min()) / 4 if not plotted.empty else 0.01
    hi = float(plotted["ai"].max()) * 4 if not plotted.empty else 1000.0
    for ceiling in ceilings:  # reach past the ridge points so every roof's corner shows
        for precision in ceiling.peaks:
            hi = max(hi, (ceiling.ridge(precision) or 0.0) * 4)
    roofs = roof_lines(ceilings, (lo, hi))
    ends = roofs.groupby("roof", as_index=False).last() if not roofs.empty else None
    return render(roofline_template(present_verdicts(plotted)),
                  {"roofs": roofs, "ends": ends, "slope": _memory_label(ceilings, roofs), "points": plotted,
                   "selected": _selected(plotted, selected)})


@functools.lru_cache(maxsize=64)
def bandwidth_template(verdicts: tuple[str, ...], height: int = 340) -> dict:
    y = alt.Y("gbps:Q", title="achieved GB/s (minimum bytes / time)")
    roofs = alt.Chart(alt.Data(name="roofs")).mark_rule(strokeDash=[6, 3], color="#52606d").encode(
        y=y, tooltip=["roof:N"])
    points = alt.Chart(alt.Data(name="points")).mark_circle(size=90, opacity=0.9, stroke="white",
                                                            strokeWidth=1).encode(
        x=ROUND_X, y=y, color=verdict_color(verdicts),
        tooltip=[alt.Tooltip("candidate_id:Q", title="candidate"), alt.Tooltip("config:N"),
                 alt.Tooltip("gbps:Q", format=".4g", title="GB/s")])
    ring = alt.Chart(alt.Data(name="selected")).mark_point(size=320, **RING).encode(x=ROUND_X, y=y)
    return alt.layer(roofs, points, ring).properties(height=height).to_dict(validate=False)


def bandwidth_chart(points: pd.DataFrame, ceilings: Sequence[DeviceCeilings], selected: int | None) -> dict:
    """For problems that do no arithmetic (copies, transposes) the roof is DRAM bandwidth alone."""
    plotted = points[points["gbps"].notna()]
    roofs = pd.DataFrame([{"gbps": c.dram_bandwidth / 1e9,
                           "roof": f"DRAM {c.dram_bandwidth / 1e12:.2f} TB/s ({c.source})"}
                          for c in ceilings if c.dram_bandwidth], columns=["gbps", "roof"])
    return render(bandwidth_template(present_verdicts(plotted)),
                  {"roofs": roofs, "points": plotted, "selected": _selected(plotted, selected)})


# --- search tree ----------------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def tree_template(verdicts: tuple[str, ...]) -> dict:
    x = alt.X("x:Q", title="depth (rounds from the root)", axis=alt.Axis(tickMinStep=1, format="d"))
    y = alt.Y("y:Q", title=None, axis=None, scale=alt.Scale(reverse=True))
    edges = alt.Chart(alt.Data(name="edges")).mark_rule(color="#9aa5b1", strokeWidth=1.2).encode(
        x=x, y=y, x2="x2:Q", y2="y2:Q")
    nodes = alt.Chart(alt.Data(name="nodes")).mark_circle(opacity=0.95, stroke="white", strokeWidth=1).encode(
        x=x, y=y, color=verdict_color(verdicts),
        size=alt.Size("size:Q", scale=alt.Scale(type="sqrt", range=[40, 420], domain=[0.25, 20]), legend=None),
        tooltip=[*_TOOLTIP, alt.Tooltip("speedup:Q", format=".3f"), alt.Tooltip("parent_id:Q", title="parent")])
    ring = alt.Chart(alt.Data(name="selected")).mark_point(size=520, **RING).encode(x=x, y=y)
    return alt.layer(edges, nodes, ring).to_dict(validate=False)


def tree_chart(nodes: pd.DataFrame, edges: pd.DataFrame, selected: int | None) -> dict:
    """The search tree left to right: depth across, siblings stacked; size grows with speedup."""
    rows = float(nodes["y"].max()) + 1 if not nodes.empty and math.isfinite(nodes["y"].max()) else 1.0
    sized = nodes.assign(size=nodes["speedup"].fillna(0.5).clip(0.25, 20))
    columns = ["candidate_id", "step", "verdict", "verdict_words", "strategy", "speedup", "parent_id", "x", "y",
               "size"]
    return render(tree_template(present_verdicts(nodes)),
                  {"edges": edges, "nodes": sized[columns], "selected": _selected(sized, selected)[columns]},
                  height=int(min(900, max(220, 18 * rows))))
