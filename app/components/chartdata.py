"""Pure data shaping for the Run page's charts: speedup over rounds, roofline points, tree layout.

Kept apart from the Altair code so it can be tested without drawing, and so the big-run rules
(thinning to a point budget, keeping the selected candidate and the best ones) live in one place.
Roofline points are fields of the engine's stored records, and roofs come from the engine's device
table and roofline arithmetic: the chart draws what the feedback was decided under.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from app.components.style import verdict_key, verdict_words
from db.queries import RoundRow
from engine.analysis import DeviceCeilings, achieved, attainable, shown_ceilings
from engine.problems import Problem
from engine.rank.best import best_by_step
from engine.rank.pooled import PooledContext
from engine.store.diagnostics import RooflineEntry, TimingEntry

MAX_POINTS = 2500
MAX_TREE_NODES = 1200


def rounds_frame(rows: Sequence[RoundRow]) -> pd.DataFrame:
    """One row per candidate with the columns every chart shares."""
    records = [{
        "candidate_id": r.candidate_id, "step": r.step if r.step is not None else -1, "sample": r.sample,
        "parent_id": r.parent_id, "depth": r.depth, "origin": r.origin, "strategy": r.strategy or "",
        "verdict": verdict_key(r.verdict), "verdict_words": verdict_words(r.verdict), "speedup": r.speedup,
        "candidate_us": r.candidate_us, "flagged": r.flagged,
    } for r in rows]
    columns = ["candidate_id", "step", "sample", "parent_id", "depth", "origin", "strategy", "verdict",
               "verdict_words", "speedup", "candidate_us", "flagged"]
    return pd.DataFrame.from_records(records, columns=columns)


def thin(frame: pd.DataFrame, keep_ids: Iterable[int] = (), max_points: int = MAX_POINTS,
         score: str = "speedup") -> pd.DataFrame:
    """At most `max_points` rows: the ones asked for, the best per step, then an even spread."""
    if len(frame) <= max_points:
        return frame
    keep = set(keep_ids)
    if score in frame and frame[score].notna().any():
        best = frame.dropna(subset=[score]).sort_values(score, ascending=False).drop_duplicates("step")
        keep.update(best["candidate_id"].head(max_points // 2))
    chosen = frame[frame["candidate_id"].isin(keep)]
    rest = frame[~frame["candidate_id"].isin(keep)]
    budget = max(0, max_points - len(chosen))
    if budget and len(rest):
        stride = max(1, math.ceil(len(rest) / budget))
        chosen = pd.concat([chosen, rest.iloc[::stride].head(budget)])
    return chosen.sort_values("candidate_id")


def best_so_far(frame: pd.DataFrame, pooled: PooledContext | None) -> pd.DataFrame:
    """Per step, the run's best by the pooled rule (`engine.rank.best.best_by_step`): the fastest pooled
    median among the codes tried up to that step, so the line ends at the run's "Best speedup" and one lucky
    evaluation (or a flagged result no person has cleared) never lifts it. `pooled`: the run's own codes
    pooled (`engine.rank.best.run_contexts`); None where nothing was timed."""
    if pooled is None or frame.empty:
        return pd.DataFrame(columns=["step", "best", "candidate_id"])
    step_of = {int(cid): int(step) for cid, step in zip(frame["candidate_id"], frame["step"], strict=True)}
    return pd.DataFrame(best_by_step(pooled, step_of), columns=["step", "best", "candidate_id"])


# --- roofline -------------------------------------------------------------------------------------

SHOWN_PRECISIONS = ("fp64", "fp32", "fp16")  # bf16 shares fp16's roof; *_mma_sync are paths
ROOFLINE_COLUMNS = ["candidate_id", "step", "verdict", "verdict_words", "config", "ai", "gflops", "gbps", "bound",
                    "pct_of_roof", "bottleneck"]
TIMED_CONFIG = "timed configuration"  # rows stored before the roofline record named its configuration


def _positive(value: float | None) -> float | None:
    """Only what a log axis can place: a copy has no FLOPs, so no intensity or FLOP/s to plot."""
    return value if value is not None and math.isfinite(value) and value > 0 else None


def _giga(value: float | None) -> float | None:
    return value / 1e9 if _positive(value) else None


def _identity(candidate_id: int, step: int | None, verdict: str | None) -> dict[str, Any]:
    return {"candidate_id": candidate_id, "step": step if step is not None else -1, "verdict": verdict_key(verdict),
            "verdict_words": verdict_words(verdict)}


def device_ceilings(device: str | None, extra_precisions: Iterable[str] = ()) -> list[DeviceCeilings]:
    """The engine's roofs for the device (its table, and its measurements when measured here); the
    table's only for the common precisions and those the run's points were held to."""
    wanted = set(SHOWN_PRECISIONS) | set(extra_precisions)
    return [replace(c, peaks={p: v for p, v in c.peaks.items() if p in wanted}) if c.source == "table" else c
            for c in shown_ceilings(device)]


def roofline_frame(entries: Sequence[RooflineEntry]) -> pd.DataFrame:
    """One row per candidate from the stored roofline records (a record without a point is skipped)."""
    records = []
    for entry in entries:
        point, bottleneck = entry.record.point, entry.record.bottleneck
        if point is None:
            continue
        records.append({
            **_identity(entry.candidate_id, entry.step, entry.verdict), "config": entry.record.config or TIMED_CONFIG,
            "ai": _positive(point.arithmetic_intensity), "gflops": _giga(point.achieved_flops),
            "gbps": _giga(point.achieved_bandwidth), "bound": point.bound, "pct_of_roof": point.pct_of_roof * 100,
            "bottleneck": str(bottleneck) if bottleneck else None,
        })
    return pd.DataFrame.from_records(records, columns=ROOFLINE_COLUMNS)


def model_roofline_frame(entries: Sequence[TimingEntry], problem: Problem) -> pd.DataFrame:
    """Roofline points from measured times and the problem's analytical model (FLOPs, minimum bytes).

    Used where a run stored no roofline diagnostics (a CPU run, an older run): intensity is the
    model's, achieved throughput is model work over the measured median time.
    """
    records = []
    for entry in entries:
        for result in entry.configs:
            seconds = result.candidate.median_us * 1e-6 if result.candidate is not None else 0.0
            try:
                config = problem.config(result.name)
            except KeyError:
                continue
            if seconds <= 0:
                continue
            rates = achieved(problem.flops(config) or 0.0, problem.min_bytes(config) or 0.0, seconds)
            records.append({
                **_identity(entry.candidate_id, entry.step, entry.verdict), "config": result.name,
                "ai": _positive(rates.arithmetic_intensity), "gflops": _giga(rates.flops_per_s),
                "gbps": _giga(rates.bytes_per_s), "bound": None, "pct_of_roof": None, "bottleneck": None,
            })
    return pd.DataFrame.from_records(records, columns=ROOFLINE_COLUMNS)


def run_ceilings(entries: Sequence[RooflineEntry], device: str | None) -> list[DeviceCeilings]:
    """The roofs the run's points were placed under: the device its records name, else the run's."""
    named = next((e.record.device for e in reversed(entries) if e.record.device), None) or device
    used = {e.record.point.precision for e in entries if e.record.point is not None and e.record.point.precision}
    return device_ceilings(named, used)


def roof_lines(ceilings: Sequence[DeviceCeilings], ai_range: tuple[float, float], samples: int = 48,
               ) -> pd.DataFrame:
    """Points along each roof (the engine's `attainable`) for each precision, on a log grid."""
    lo, hi = ai_range
    lo, hi = max(lo, 1e-4), max(hi, lo * 10)
    grid = [lo * (hi / lo) ** (i / (samples - 1)) for i in range(samples)]
    records = []
    for ceiling in ceilings:
        suffix = "" if len(ceilings) == 1 else f" ({ceiling.source})"
        bandwidth = ceiling.dram_bandwidth
        for precision, peak in sorted(ceiling.peaks.items(), key=lambda kv: kv[1]):
            records += [{"ai": x, "gflops": attainable(x, peak, bandwidth) / 1e9,
                         "roof": f"{precision} {peak / 1e12:.0f} TFLOP/s{suffix}"} for x in grid]
        if bandwidth and not ceiling.peaks:
            records += [{"ai": x, "gflops": attainable(x, math.inf, bandwidth) / 1e9, "roof": f"DRAM{suffix}"}
                        for x in grid]
    return pd.DataFrame.from_records(records, columns=["ai", "gflops", "roof"])


# --- search tree ----------------------------------------------------------------------------------

def _ancestors(node: int, parents: dict[int, int | None]) -> list[int]:
    chain, seen = [], set()
    while node is not None and node in parents and node not in seen:
        seen.add(node)
        chain.append(node)
        node = parents[node]
    return chain


def tree_subset(frame: pd.DataFrame, selected: int | None, max_nodes: int = MAX_TREE_NODES) -> pd.DataFrame:
    """For big trees: the selected node, the best ones and the newest, each with its ancestors."""
    if len(frame) <= max_nodes:
        return frame
    parents = {int(k): (int(v) if pd.notna(v) else None)
               for k, v in zip(frame["candidate_id"], frame["parent_id"], strict=True)}
    wanted: list[int] = [selected] if selected is not None else []
    wanted += list(frame.dropna(subset=["speedup"]).nlargest(50, "speedup")["candidate_id"])
    wanted += list(frame["candidate_id"].iloc[::-1])
    keep: set[int] = set()
    for node in wanted:
        if len(keep) >= max_nodes:
            break
        keep.update(_ancestors(int(node), parents))
    return frame[frame["candidate_id"].isin(keep)]


def tree_layout(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Node positions (x = depth from its root, y = leaf order) and parent→child edges.

    A tidy layout: leaves are stacked in depth-first order and a parent sits at the middle of its
    children, so an iterative run is a straight line and a beam or MCTS run fans out.
    """
    if frame.empty:
        return frame.assign(x=[], y=[]), pd.DataFrame(columns=["x", "y", "x2", "y2"])
    ids = set(frame["candidate_id"])
    children: dict[int | None, list[int]] = {}
    for cid, parent in zip(frame["candidate_id"], frame["parent_id"], strict=True):
        key = int(parent) if pd.notna(parent) and int(parent) in ids else None
        children.setdefault(key, []).append(int(cid))
    for kids in children.values():
        kids.sort()
    x: dict[int, int] = {}
    y: dict[int, float] = {}
    next_leaf = 0.0
    stack: list[tuple[int, int, bool]] = [(root, 0, False) for root in reversed(children.get(None, []))]
    while stack:  # iterative post-order: deep chains must not hit the recursion limit
        node, depth, expanded = stack.pop()
        kids = children.get(node, [])
        if expanded or not kids:
            x[node] = depth
            if kids:
                y[node] = (y[kids[0]] + y[kids[-1]]) / 2
            else:
                y[node], next_leaf = next_leaf, next_leaf + 1
            continue
        stack.append((node, depth, True))
        stack.extend((kid, depth + 1, False) for kid in reversed(kids))
    nodes = frame.assign(x=frame["candidate_id"].map(x), y=frame["candidate_id"].map(y))
    by_id = nodes.set_index("candidate_id")
    edges = [{"x": by_id.at[int(row.parent_id), "x"], "y": by_id.at[int(row.parent_id), "y"], "x2": row.x,
              "y2": row.y}
             for row in nodes.itertuples() if pd.notna(row.parent_id) and int(row.parent_id) in ids]
    return nodes, pd.DataFrame.from_records(edges, columns=["x", "y", "x2", "y2"])
