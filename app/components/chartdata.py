"""Pure data shaping for the Run page's charts: speedup over rounds, roofline points, tree layout.

Kept apart from the Altair code so it can be tested without drawing, and so the big-run rules
(thinning to a point budget, keeping the selected candidate and the best ones) live in one place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from app.components.style import verdict_key, verdict_words
from db.queries import RooflineRow, RoundRow, TimingRow
from engine.problems import Problem

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


def best_so_far(frame: pd.DataFrame) -> pd.DataFrame:
    """Per step, the best correct speedup found up to and including that step."""
    correct = frame[(frame["verdict"] == "correct") & frame["speedup"].notna()]
    if correct.empty:
        return pd.DataFrame(columns=["step", "best"])
    per_step = correct.groupby("step", as_index=False)["speedup"].max().sort_values("step")
    per_step["best"] = per_step["speedup"].cummax()
    return per_step[["step", "best"]]


# --- roofline -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ceilings:
    """A device's roofs: DRAM bandwidth and peak FLOP/s per precision, and where they came from."""

    device: str
    bandwidth_bytes_per_s: float | None
    flops_per_s: dict[str, float]
    source: str  # "table" (the engine's built-in table) | "measured" (on the device)


SHOWN_PRECISIONS = ("fp64", "fp32", "fp16")  # bf16 shares fp16's roof; *_mma_sync are paths


_BANDWIDTH_KEYS = ("bandwidth_bytes_per_s", "dram_bytes_per_s", "peak_bytes_per_s", "bandwidth", "dram_bandwidth")
_FLOPS_KEYS = ("flops_per_s", "flops", "peak_flops", "peak_flops_per_s", "compute")


def _as_float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def parse_ceilings(raw: Any, device: str = "", source: str = "measured") -> Ceilings | None:
    """Ceilings from a roofline diagnostic's own block, whatever spelling of the keys it used."""
    if not isinstance(raw, dict):
        return None
    bandwidth = next((_as_float(raw[k]) for k in _BANDWIDTH_KEYS if k in raw), None)
    flops: dict[str, float] = {}
    for key in _FLOPS_KEYS:
        value = raw.get(key)
        if isinstance(value, dict):
            flops.update({str(p): f for p, v in value.items() if (f := _as_float(v))})
        elif _as_float(value):
            flops[str(raw.get("precision", "fp32"))] = _as_float(value)
    if bandwidth is None and not flops:
        return None
    return Ceilings(str(raw.get("device") or raw.get("name") or device), bandwidth, flops,
                    str(raw.get("source") or source))


def device_ceilings(device: str | None, extra_precisions: Iterable[str] = ()) -> list[Ceilings]:
    """The engine's table entry for the device and, when measured on it, the measured ceilings."""
    from engine.analysis.devices import load_measured, match_device

    if not device:
        return []
    wanted = set(SHOWN_PRECISIONS) | set(extra_precisions)
    found = []
    entry = match_device(device)
    if entry is not None:
        found.append(Ceilings(entry.name, entry.dram_bandwidth,
                              {p: v for p, v in entry.peaks.items() if p in wanted}, "table"))
    try:
        measured = load_measured().get(device)
    except (OSError, ValueError, TypeError):
        measured = None
    if measured is not None:
        found.append(Ceilings(device, measured.dram_bandwidth, dict(measured.matmul), "measured"))
    return found


def _normalised(point: dict[str, Any]) -> dict[str, Any]:
    """The engine's RooflinePoint spelling mapped onto the names the charts use."""
    point = dict(point)
    if "achieved_bytes_per_s" not in point and "achieved_bandwidth" in point:
        point["achieved_bytes_per_s"] = point["achieved_bandwidth"]
    pct = point.get("pct_of_roof")
    if isinstance(pct, int | float) and point.get("roof") is not None and pct <= 1.5:
        point["pct_of_roof"] = pct * 100  # a fraction of the roof, shown as a percentage
    return point


def per_config(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Roofline points by configuration: the engine stores one `point` (the timed configuration)."""
    if "point" in data:
        point = data.get("point")
        if not isinstance(point, dict):
            return {}
        classification = data.get("classification") or {}
        point = {"bottleneck": classification.get("bottleneck"), **_normalised(point)}
        return {str(data.get("config") or point.get("config") or "timed configuration"): point}
    configs = data.get("configs")
    if isinstance(configs, list):
        return {str(c.get("name", f"config {i}")): c for i, c in enumerate(configs) if isinstance(c, dict)}
    if isinstance(configs, dict):
        return {str(k): v for k, v in configs.items() if isinstance(v, dict)}
    markers = ("arithmetic_intensity", "achieved_flops", "achieved_bytes_per_s")
    return {str(k): _normalised(v) for k, v in data.items() if isinstance(v, dict) and any(m in v for m in markers)}


def roofline_frame(rows: Sequence[RooflineRow]) -> pd.DataFrame:
    """One row per (candidate, configuration) from the stored roofline diagnostics."""
    records = []
    for row in rows:
        for config, point in per_config(row.data).items():
            records.append({
                "candidate_id": row.candidate_id, "step": row.step if row.step is not None else -1,
                "verdict": verdict_key(row.verdict), "verdict_words": verdict_words(row.verdict), "config": config,
                "ai": _as_float(point.get("arithmetic_intensity")),
                "gflops": (_as_float(point.get("achieved_flops")) or 0.0) / 1e9 or None,
                "gbps": (_as_float(point.get("achieved_bytes_per_s")) or 0.0) / 1e9 or None,
                "bound": point.get("bound"), "pct_of_roof": point.get("pct_of_roof"),
                "bottleneck": point.get("bottleneck"),
            })
    columns = ["candidate_id", "step", "verdict", "verdict_words", "config", "ai", "gflops", "gbps", "bound",
               "pct_of_roof", "bottleneck"]
    return pd.DataFrame.from_records(records, columns=columns)


def model_roofline_frame(rows: Sequence[TimingRow], problem: Problem) -> pd.DataFrame:
    """Roofline points from measured times and the problem's analytical model (FLOPs, minimum bytes).

    Used where a run stored no roofline diagnostics (a CPU run, an older run): intensity is the
    model's, achieved throughput is model work over the measured median time.
    """
    records = []
    for row in rows:
        for result in row.configs:
            name = str(result.get("name", ""))
            timing = result.get("candidate") or {}
            median_us = _as_float(timing.get("median_us")) if isinstance(timing, dict) else None
            try:
                config = problem.config(name)
            except KeyError:
                continue
            if median_us is None:
                continue
            flops, nbytes = problem.flops(config), problem.min_bytes(config)
            seconds = median_us * 1e-6
            records.append({
                "candidate_id": row.candidate_id, "step": row.step if row.step is not None else -1,
                "verdict": verdict_key(row.verdict), "verdict_words": verdict_words(row.verdict), "config": name,
                "ai": flops / nbytes if flops and nbytes else None,
                "gflops": flops / seconds / 1e9 if flops else None,
                "gbps": nbytes / seconds / 1e9 if nbytes else None,
                "bound": None, "pct_of_roof": None, "bottleneck": None,
            })
    columns = ["candidate_id", "step", "verdict", "verdict_words", "config", "ai", "gflops", "gbps", "bound",
               "pct_of_roof", "bottleneck"]
    return pd.DataFrame.from_records(records, columns=columns)


def ceilings_from_rows(rows: Sequence[RooflineRow], device: str | None) -> list[Ceilings]:
    """The device's roofs: ceilings stored with the diagnostics, else the engine's table and measurements."""
    for row in reversed(rows):
        for key, source in (("ceilings", "table"), ("measured_ceilings", "measured")):
            parsed = parse_ceilings(row.data.get(key), device or "", source)
            if parsed:
                return [parsed]
    named = next((str(r.data["device"]) for r in reversed(rows) if r.data.get("device")), None) or device
    used = {str(p["precision"]) for r in rows if isinstance(p := r.data.get("point"), dict) and p.get("precision")}
    return device_ceilings(named, used)


def roof_lines(ceilings: Sequence[Ceilings], ai_range: tuple[float, float], samples: int = 48) -> pd.DataFrame:
    """Points along each roof: min(bandwidth × intensity, peak) for each precision, on a log grid."""
    lo, hi = ai_range
    lo, hi = max(lo, 1e-4), max(hi, lo * 10)
    grid = [lo * (hi / lo) ** (i / (samples - 1)) for i in range(samples)]
    records = []
    for ceiling in ceilings:
        suffix = "" if len(ceilings) == 1 else f" ({ceiling.source})"
        bandwidth = ceiling.bandwidth_bytes_per_s
        for precision, peak in sorted(ceiling.flops_per_s.items(), key=lambda kv: kv[1]):
            for x in grid:
                y = min(peak, bandwidth * x) if bandwidth else peak
                records.append({"ai": x, "gflops": y / 1e9,
                                "roof": f"{precision} {peak / 1e12:.0f} TFLOP/s{suffix}"})
        if bandwidth and not ceiling.flops_per_s:
            records += [{"ai": x, "gflops": bandwidth * x / 1e9, "roof": f"DRAM{suffix}"} for x in grid]
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
