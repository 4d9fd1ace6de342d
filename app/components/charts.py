"""Altair charts of a run: speedup over rounds, the roofline, the search tree.

Each takes already-shaped frames (see `chartdata`) and returns a chart; the verdict colour scale
is shared so a point means the same thing in all three. The selected candidate is drawn larger,
ringed, on top.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from app.components.chartdata import Ceilings, roof_lines
from app.components.style import PRIMARY, VERDICT_COLORS, VERDICT_ORDER

alt.data_transformers.disable_max_rows()  # the frames are thinned to a point budget beforehand

VERDICT_LEGEND = alt.Legend(title="verdict", orient="bottom", columns=5, symbolType="circle")


def verdict_color(*frames: pd.DataFrame, legend: bool = True) -> alt.Color:
    """Colour by verdict with the shared palette, the legend listing only verdicts present."""
    present = set().union(*(set(f["verdict"]) for f in frames if "verdict" in f))
    domain = [v for v in VERDICT_ORDER if v in present] or ["pending"]
    return alt.Color("verdict:N", scale=alt.Scale(domain=domain, range=[VERDICT_COLORS[v] for v in domain]),
                     legend=VERDICT_LEGEND if legend else None)
_TOOLTIP = [alt.Tooltip("candidate_id:Q", title="candidate"), alt.Tooltip("step:Q", title="round"),
            alt.Tooltip("verdict_words:N", title="verdict"), alt.Tooltip("strategy:N", title="strategy")]


def _selected(frame: pd.DataFrame, selected: int | None) -> pd.DataFrame:
    return frame[frame["candidate_id"] == selected] if selected is not None else frame.iloc[0:0]


def speedup_chart(frame: pd.DataFrame, best: pd.DataFrame, selected: int | None,
                  height: int = 300) -> alt.LayerChart:
    """Speedup per correct candidate over rounds (log scale), the best so far, 1× marked."""
    timed = frame[frame["speedup"].notna() & (frame["speedup"] > 0)]
    lo = min(1.0, float(timed["speedup"].min())) if not timed.empty else 0.5
    hi = max(1.0, float(timed["speedup"].max())) if not timed.empty else 2.0
    y_scale = alt.Scale(type="log", domain=[lo / 1.25, hi * 1.25], nice=False)
    x = alt.X("step:Q", title="round", axis=alt.Axis(tickMinStep=1, format="d"))
    base = alt.Chart(timed)
    points = base.mark_circle(size=110, opacity=0.95, stroke="white", strokeWidth=1.2).encode(
        x=x, y=alt.Y("speedup:Q", title="speedup vs baseline (×)", scale=y_scale),
        color=verdict_color(frame, legend=False),
        tooltip=[*_TOOLTIP, alt.Tooltip("speedup:Q", format=".3f", title="speedup")],
    )
    one = alt.Chart(pd.DataFrame({"y": [1.0]})).mark_rule(strokeDash=[4, 4], color="#7b8794").encode(y="y:Q")
    layers = [one, points]
    if not best.empty:
        layers.insert(1, alt.Chart(best).mark_line(interpolate="step-after", color=PRIMARY, strokeWidth=1.5,
                                                           opacity=0.55).encode(
            x="step:Q", y="best:Q", tooltip=[alt.Tooltip("best:Q", format=".3f", title="best so far")]))
    highlight = _selected(timed, selected)
    if not highlight.empty:
        layers.append(alt.Chart(highlight).mark_point(size=260, filled=False, strokeWidth=2.5, color="#111827")
                      .encode(x="step:Q", y="speedup:Q"))
    return alt.layer(*layers).properties(height=height)


def verdict_strip(frame: pd.DataFrame) -> alt.Chart:
    """Every candidate as a tick per round, coloured by verdict: the failures the speedup chart omits."""
    x = alt.X("step:Q", title="round", axis=alt.Axis(tickMinStep=1, format="d"))
    return alt.Chart(frame).mark_tick(thickness=3, size=14).encode(
        x=x, y=alt.Y("verdict:N", title=None, sort=list(VERDICT_ORDER), axis=alt.Axis(labels=False, ticks=False)),
        color=verdict_color(frame), tooltip=_TOOLTIP,
    ).properties(height=70, title=alt.TitleParams("every candidate by verdict", fontSize=11, anchor="start"))


def roofline_chart(points: pd.DataFrame, ceilings: list[Ceilings], selected: int | None,
                   height: int = 380) -> alt.LayerChart:
    """Log-log roofline: memory and compute roofs per precision, candidates coloured by verdict."""
    plotted = points[points["ai"].notna() & points["gflops"].notna()]
    lo = float(plotted["ai"].min()) / 4 if not plotted.empty else 0.01
    hi = float(plotted["ai"].max()) * 4 if not plotted.empty else 1000.0
    for ceiling in ceilings:  # reach past the ridge points so every roof's corner shows
        if ceiling.bandwidth_bytes_per_s:
            for peak in ceiling.flops_per_s.values():
                hi = max(hi, peak / ceiling.bandwidth_bytes_per_s * 4)
    roofs = roof_lines(ceilings, (lo, hi))
    x = alt.X("ai:Q", title="arithmetic intensity (FLOP / byte)", scale=alt.Scale(type="log"))
    y = alt.Y("gflops:Q", title="achieved GFLOP/s", scale=alt.Scale(type="log"))
    layers = []
    if not roofs.empty:
        layers.append(alt.Chart(roofs).mark_line(strokeWidth=1.6, opacity=0.9, color="#52606d").encode(
            x=x, y=y, detail="roof:N", tooltip=[alt.Tooltip("roof:N")]))
        ends = roofs.groupby("roof", as_index=False).last()
        layers.append(alt.Chart(ends).mark_text(align="right", dy=-7, fontSize=11, color="#52606d").encode(
            x=x, y=y, text="roof:N"))
        slope = _memory_label(ceilings, roofs)
        if slope is not None:
            layers.append(alt.Chart(slope).mark_text(align="left", dx=0, dy=-14, fontSize=11,
                                                     color="#52606d").encode(x=x, y=y, text="roof:N"))
    layers.append(alt.Chart(plotted).mark_circle(size=90, opacity=0.9, stroke="white", strokeWidth=1).encode(
        x=x, y=y, color=verdict_color(plotted),
        tooltip=[alt.Tooltip("candidate_id:Q", title="candidate"), alt.Tooltip("step:Q", title="round"),
                 alt.Tooltip("verdict_words:N", title="verdict"), alt.Tooltip("config:N"),
                 alt.Tooltip("ai:Q", format=".3g", title="FLOP/byte"), alt.Tooltip("gflops:Q", format=".4g"),
                 alt.Tooltip("gbps:Q", format=".4g", title="GB/s"), alt.Tooltip("bound:N"),
                 alt.Tooltip("pct_of_roof:Q", format=".1f", title="% of roof"), alt.Tooltip("bottleneck:N")]))
    highlight = _selected(plotted, selected)
    if not highlight.empty:
        layers.append(alt.Chart(highlight).mark_point(size=320, filled=False, strokeWidth=2.5, color="#111827")
                      .encode(x=x, y=y))
    return alt.layer(*layers).properties(height=height)


def _memory_label(ceilings: list[Ceilings], roofs: pd.DataFrame) -> pd.DataFrame | None:
    """Where to write the DRAM roof's bandwidth: a third of the way up its slope."""
    bandwidth = next((c.bandwidth_bytes_per_s for c in ceilings if c.bandwidth_bytes_per_s), None)
    if bandwidth is None or roofs.empty:
        return None
    ai = float(roofs["ai"].min()) * 1.4
    return pd.DataFrame([{"ai": ai, "gflops": bandwidth * ai / 1e9, "roof": f"DRAM {bandwidth / 1e12:.2f} TB/s"}])


def bandwidth_chart(points: pd.DataFrame, ceilings: list[Ceilings], selected: int | None,
                    height: int = 340) -> alt.LayerChart:
    """For problems that do no arithmetic (copies, transposes) the roof is DRAM bandwidth alone."""
    plotted = points[points["gbps"].notna()]
    x = alt.X("step:Q", title="round", axis=alt.Axis(tickMinStep=1, format="d"))
    y = alt.Y("gbps:Q", title="achieved GB/s (minimum bytes / time)")
    layers = [alt.Chart(plotted).mark_circle(size=90, opacity=0.9, stroke="white", strokeWidth=1).encode(
        x=x, y=y, color=verdict_color(plotted),
        tooltip=[alt.Tooltip("candidate_id:Q", title="candidate"), alt.Tooltip("config:N"),
                 alt.Tooltip("gbps:Q", format=".4g", title="GB/s")])]
    roofs = [{"gbps": c.bandwidth_bytes_per_s / 1e9, "roof": f"DRAM {c.bandwidth_bytes_per_s / 1e12:.2f} TB/s "
              f"({c.source})"} for c in ceilings if c.bandwidth_bytes_per_s]
    if roofs:
        layers.insert(0, alt.Chart(pd.DataFrame(roofs)).mark_rule(strokeDash=[6, 3], color="#52606d").encode(
            y="gbps:Q", tooltip=["roof:N"]))
    highlight = _selected(plotted, selected)
    if not highlight.empty:
        layers.append(alt.Chart(highlight).mark_point(size=320, filled=False, strokeWidth=2.5, color="#111827")
                      .encode(x=x, y=y))
    return alt.layer(*layers).properties(height=height)


def tree_chart(nodes: pd.DataFrame, edges: pd.DataFrame, selected: int | None) -> alt.LayerChart:
    """The search tree left to right: depth across, siblings stacked; size grows with speedup."""
    height = int(min(900, max(220, 18 * (nodes["y"].max() + 1 if not nodes.empty else 1))))
    x = alt.X("x:Q", title="depth (rounds from the root)", axis=alt.Axis(tickMinStep=1, format="d"))
    y = alt.Y("y:Q", title=None, axis=None, scale=alt.Scale(reverse=True))
    layers = [alt.Chart(edges).mark_rule(color="#9aa5b1", strokeWidth=1.2).encode(x=x, y=y, x2="x2:Q", y2="y2:Q")]
    sized = nodes.assign(size=nodes["speedup"].fillna(0.5).clip(0.25, 20))
    layers.append(alt.Chart(sized).mark_circle(opacity=0.95, stroke="white", strokeWidth=1).encode(
        x=x, y=y, color=verdict_color(nodes),
        size=alt.Size("size:Q", scale=alt.Scale(type="sqrt", range=[40, 420]), legend=None),
        tooltip=[*_TOOLTIP, alt.Tooltip("speedup:Q", format=".3f"), alt.Tooltip("parent_id:Q", title="parent")]))
    highlight = _selected(nodes, selected)
    if not highlight.empty:
        layers.append(alt.Chart(highlight).mark_point(size=520, filled=False, strokeWidth=2.5, color="#111827")
                      .encode(x=x, y=y))
    return alt.layer(*layers).properties(height=height)
