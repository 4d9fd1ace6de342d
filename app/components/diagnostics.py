"""Tables for one round: per-configuration correctness and time, and the diagnostics.

The frames are built by pure functions that accept whatever keys the analysis stored (it grows
over time), so a new metric shows up as a new column instead of breaking the page.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from app.components.chartdata import per_config
from app.components.style import fmt_number, fmt_us
from db.queries import CandidateDetail, DiagnosticView

_MIX_KEYS = ("instruction_mix", "mix", "instructions", "sass_mix")
_KERNEL_NAME_KEYS = ("name", "kernel", "function")


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys; lists of scalars joined; used for ncu and energy blobs."""
    flat: dict[str, Any] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            flat.update(flatten(value, f"{prefix}{key}."))
    elif isinstance(data, list) and data and all(isinstance(v, dict) for v in data):
        for i, value in enumerate(data):
            label = next((str(value[k]) for k in _KERNEL_NAME_KEYS if k in value), str(i))
            flat.update(flatten({k: v for k, v in value.items() if k not in _KERNEL_NAME_KEYS}, f"{prefix}{label}."))
    else:
        flat[prefix.rstrip(".")] = ", ".join(map(str, data)) if isinstance(data, list) else data
    return flat


def key_value_frame(data: dict[str, Any]) -> pd.DataFrame:
    flat = flatten(data)
    return pd.DataFrame({"metric": list(flat), "value": [fmt_number(v) for v in flat.values()]})


def _time(stats: Any) -> float | None:
    if isinstance(stats, dict):
        value = stats.get("median_us")
        return float(value) if isinstance(value, int | float) else None
    return None


def configs_frame(configs: list[dict[str, Any]]) -> pd.DataFrame:
    """One row per configuration: hidden or not, correct or not, errors, candidate and baseline times."""
    rows = []
    for config in configs:
        candidate_us = _time(config.get("candidate"))
        row = {
            "configuration": config.get("name", "?"), "hidden": bool(config.get("hidden")),
            "correct": "yes" if config.get("ok") else "no",
            "max abs error": config.get("max_abs_error"), "max rel error": config.get("max_rel_error"),
            "first mismatch": config.get("first_mismatch") or config.get("message") or "",
            "candidate": fmt_us(candidate_us),
        }
        baselines = config.get("baselines") or {}
        for name, stats in baselines.items():
            row[f"baseline {name}"] = fmt_us(_time(stats))
        first = next((_time(s) for s in baselines.values() if _time(s)), None)
        row["speedup"] = f"{first / candidate_us:.2f}×" if first and candidate_us else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def _occupancy(value: Any, arch: str | None) -> dict[str, Any]:
    """Occupancy on the target arch: a fraction, or the engine's per-arch block (warps and limiters)."""
    if isinstance(value, int | float):
        return {"occupancy": f"{value:.0%}" if value <= 1 else fmt_number(value)}
    if not isinstance(value, dict) or not value:
        return {}
    entry = value.get(arch) if arch in value else value if "warps_per_sm" in value else value[sorted(value)[-1]]
    if not isinstance(entry, dict):
        return {}
    row: dict[str, Any] = {}
    warps, most = entry.get("warps_per_sm"), entry.get("max_warps")
    if isinstance(warps, int | float) and most:
        row["occupancy"] = f"{warps / most:.0%} ({entry.get('arch', arch)})"
    limiters = entry.get("limiters") or entry.get("limiter")
    if limiters:
        row["limited by"] = ", ".join(limiters) if isinstance(limiters, list) else str(limiters)
    if entry.get("blocks_per_sm") is not None:
        row["blocks/SM"] = entry["blocks_per_sm"]
    return row


def kernels_frames(kernels: list[dict[str, Any]], arch: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(resources, occupancy and its limiter per kernel; instruction mix per kernel) from static analysis."""
    resources, mixes = [], []
    for i, kernel in enumerate(kernels):
        name = next((str(kernel[k]) for k in _KERNEL_NAME_KEYS if k in kernel), f"kernel {i}")
        row: dict[str, Any] = {"kernel": name}
        for key, value in kernel.items():
            if key in _KERNEL_NAME_KEYS or key == "symbol":
                continue
            if key in _MIX_KEYS and isinstance(value, dict):
                counts = value.get("counts") if isinstance(value.get("counts"), dict) else value
                mix = {k: fmt_number(v) for k, v in counts.items() if not isinstance(v, dict | list)}
                if "total" in value:
                    mix = {"total": fmt_number(value["total"]), **mix}
                mixes.append({"kernel": name, **mix})
            elif key == "occupancy":
                row.update(_occupancy(value, arch))
            elif key == "resources" and isinstance(value, dict):
                row.update({k: fmt_number(v) for k, v in value.items() if k not in ("name", "arch")})
            elif key == "launch" and isinstance(value, dict):
                if value.get("block"):
                    row["block"] = "×".join(str(v) for v in value["block"])
                if value.get("grid"):
                    row["grid"] = "×".join(str(v) for v in value["grid"])
            elif isinstance(value, dict):
                row.update({f"{key}.{k}": fmt_number(v) for k, v in flatten(value).items()})
            else:
                row[key] = fmt_number(value)
        resources.append(row)
    frame = pd.DataFrame(resources)
    first = [c for c in ("kernel", "registers", "occupancy", "limited by", "blocks/SM", "smem_bytes", "spill_stores",
                         "spill_loads", "block", "grid") if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]], pd.DataFrame(mixes).fillna("")


def _agreement_mark(value: Any) -> str:
    return {True: "✓", False: "✗"}.get(value, "–")


def _pct(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, int | float) else "–"


def static_vs_ncu_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Per kernel: the CPU-side estimate beside ncu's measurement, with whether they agree."""
    return pd.DataFrame([{
        "kernel": row.get("kernel", "?"),
        "load sectors/request": f"{fmt_number(row.get('static_ld'))} → {fmt_number(row.get('ncu_ld'))} "
                                f"{_agreement_mark(row.get('ld_agree'))}",
        "store sectors/request": f"{fmt_number(row.get('static_st'))} → {fmt_number(row.get('ncu_st'))} "
                                 f"{_agreement_mark(row.get('st_agree'))}",
        "occupancy (theoretical)": f"{_pct(row.get('static_occupancy'))} → "
                                   f"{_pct(row.get('ncu_theoretical_occupancy'))} "
                                   f"{_agreement_mark(row.get('occupancy_agree'))}",
        "achieved occupancy": _pct(row.get("ncu_achieved_occupancy")),
    } for row in rows])


def ncu_headline(data: dict[str, Any]) -> str:
    """One line over the ncu table: what was profiled, how long it took, the traffic it measured."""
    summary = data.get("summary") or {}
    moved = (summary.get("dram_bytes_read") or 0) + (summary.get("dram_bytes_written") or 0)
    parts = [f"{summary.get('kernels', '?')} kernel(s) on configuration {data.get('config') or '?'!r}",
             f"{fmt_us((summary.get('duration_s') or 0) * 1e6)} on the GPU", f"{fmt_number(moved)}B DRAM traffic"]
    if data.get("seconds") is not None:
        parts.append(f"profiled in {data['seconds']:.1f} s")
    if data.get("metrics_refused"):
        parts.append(f"refused: {', '.join(data['metrics_refused'])}")
    return " · ".join(parts)


def energy_text(data: dict[str, Any]) -> str:
    """Joules per call, and beside the baseline per call and at matched speed."""
    if "candidate" not in data:
        return str(data.get("reason") or "No energy reading for this candidate.")
    side = data["candidate"]
    text = (f"{fmt_number(side.get('joules_per_call', 0) * 1e3)} mJ per call at "
            f"{fmt_number(side.get('average_watts'))} W "
            f"({fmt_number(side.get('calls'))} calls over {fmt_number(side.get('seconds'))} s)")
    comparison = data.get("comparison")
    if comparison and data.get("baseline"):
        text += (f"; {data.get('baseline_name', 'baseline')}: {fmt_number(data['baseline']['joules_per_call'] * 1e3)} "
                 f"mJ per call. Candidate/baseline: {comparison['ratio']:.2f}× per call, "
                 f"{comparison['matched_speed_ratio']:.2f}× at matched speed (the faster one idles for the "
                 "rest of the slower one's time)")
    return text


def roofline_table(data: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for name, point in per_config(data).items():
        rows.append({
            "configuration": name, "FLOP/byte": fmt_number(point.get("arithmetic_intensity")),
            "GFLOP/s": fmt_number((point.get("achieved_flops") or 0) / 1e9),
            "GB/s": fmt_number((point.get("achieved_bytes_per_s") or 0) / 1e9),
            "bound": point.get("bound", ""), "roof": point.get("precision", ""),
            "% of roof": fmt_number(point.get("pct_of_roof")),
            "bottleneck": point.get("bottleneck", ""),
        })
    return pd.DataFrame(rows)


def _table(frame: pd.DataFrame) -> None:
    st.dataframe(frame, hide_index=True, width="stretch")


def _section(title: str, diag: DiagnosticView | None, empty: str) -> bool:
    st.markdown(f"**{title}**" + (f" · bottleneck: `{diag.bottleneck}`" if diag and diag.bottleneck else ""))
    if diag is None:
        st.caption(empty)
        return False
    return True


def _show_ncu(data: dict[str, Any]) -> None:
    if data.get("ok") is False:
        st.warning(f"No ncu metrics for this candidate: {data.get('reason', 'no reason stored')}. "
                   "The diagnostics below are static estimates.", icon=":material/speed:")
        return
    if "summary" not in data:  # stored before profiles carried a summary
        _table(key_value_frame(data))
        return
    st.caption(ncu_headline(data))
    if data.get("static_vs_ncu"):
        st.caption("Static estimate → ncu measurement, per kernel")
        _table(static_vs_ncu_frame(data["static_vs_ncu"]))
    with st.expander("All ncu metrics"):
        _table(key_value_frame(data["summary"]))


def show_diagnostics(detail: CandidateDetail) -> None:
    """Registers, occupancy and its limiter, instruction mix, ncu metrics, energy, roofline."""
    static = detail.diagnostic("static")
    if _section("Static analysis (ptxas, SASS, source)", static,
                "No static analysis stored for this candidate (it may not have compiled)."):
        resources, mix = kernels_frames(list(static.data.get("kernels") or []), static.data.get("arch"))
        if not resources.empty:
            _table(resources)
        if not mix.empty:
            st.caption("Instruction mix per kernel")
            _table(mix)
        features = static.data.get("features") or {}
        if features:
            with st.expander(f"Source and binary features ({len(features)})"):
                _table(key_value_frame(features))
    ncu = detail.diagnostic("ncu")
    if _section("Nsight Compute metrics", ncu, "No ncu profile: profiling runs on a GPU, within its time budget."):
        _show_ncu(ncu.data)
    energy = detail.diagnostic("energy")
    if _section("Energy (NVML)", energy, "No energy reading for this candidate."):
        st.caption(energy_text(energy.data))
    roofline = detail.diagnostic("roofline")
    if _section("Roofline", roofline, "No roofline: it needs timed runs."):
        table = roofline_table(roofline.data)
        if not table.empty:
            _table(table)
        classification = roofline.data.get("classification") or {}
        if classification.get("reason"):
            st.caption(f"Class: {classification.get('bottleneck', '?')}, because {classification['reason']}"
                       + ("" if classification.get("measured", True) else " (not measured)") + ".")
        for note in roofline.data.get("notes") or []:
            st.caption(f"Note: {note}")
