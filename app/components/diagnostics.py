"""Tables for one round: per-configuration correctness and time, and the diagnostics.

Every table reads fields of the engine's records (`engine.store.diagnostics` turns the stored rows back into
them, older rows included), so a round shows what the engine wrote under the names the engine
gave it; there is no second guess at the keys here.
"""

from __future__ import annotations

from dataclasses import asdict, fields
from typing import Any

import pandas as pd
import streamlit as st

from app.components.chartdata import TIMED_CONFIG
from app.components.style import fmt_number, fmt_us
from engine.analysis import KernelAgreement, KernelReport, NcuRecord, RooflineRecord, kernel_row, occupancy_of
from engine.feedback.model import FeedbackRecord
from engine.schema.verdict import ConfigResult, TimingStats
from engine.store.diagnostics import CandidateDiagnostics
from engine.verify.judge.energy_meter import EnergyRecord


def _joined(values: list | tuple) -> str:
    return ", ".join(" ".join(map(str, v)) if isinstance(v, list | tuple) else str(v) for v in values)


def flatten(data: Any, prefix: str = "") -> dict[str, Any]:
    """Nested dicts as dotted keys, lists joined: for what a record keeps by name (ncu's metrics per
    kernel, the static feature vector), whose names are the profiler's and the analysis's own."""
    flat: dict[str, Any] = {}
    if isinstance(data, dict):
        for key, value in data.items():
            flat.update(flatten(value, f"{prefix}{key}."))
    else:
        flat[prefix.rstrip(".")] = _joined(data) if isinstance(data, list | tuple) else data
    return flat


def key_value_frame(data: dict[str, Any]) -> pd.DataFrame:
    flat = flatten(data)
    return pd.DataFrame({"metric": list(flat), "value": ["–" if v is None else fmt_number(v) for v in flat.values()]})


def _median(stats: TimingStats | None) -> float | None:
    return stats.median_us if stats is not None else None


def configs_frame(configs: list[ConfigResult]) -> pd.DataFrame:
    """One row per configuration: hidden or not, correct or not, errors, candidate and baseline times."""
    rows = []
    for config in configs:
        candidate_us = _median(config.candidate)
        row = {
            "configuration": config.name or "?", "hidden": config.hidden, "correct": "yes" if config.ok else "no",
            "max abs error": config.max_abs_error, "max rel error": config.max_rel_error,
            "first mismatch": config.first_mismatch or config.message or "", "candidate": fmt_us(candidate_us),
        }
        for name, stats in config.baselines.items():
            row[f"baseline {name}"] = fmt_us(_median(stats))
        first = next((t for s in config.baselines.values() if (t := _median(s))), None)
        row["speedup"] = f"{first / candidate_us:.2f}×" if first and candidate_us else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def _occupancy(kernel: KernelReport, arch: str) -> dict[str, Any]:
    """Occupancy on the target arch, every resource that binds it, and the blocks that fit."""
    occupancy = occupancy_of(kernel, arch)
    if occupancy is None or not occupancy.max_warps:
        return {}
    row: dict[str, Any] = {"occupancy": f"{occupancy.occupancy:.0%} ({occupancy.arch or arch})"}
    if occupancy.limiters:
        row["limited by"] = ", ".join(occupancy.limiters)
    row["blocks/SM"] = occupancy.blocks_per_sm
    return row


def _numbers(record: Any, prefix: str = "", skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {f"{prefix}{f.name}": fmt_number(getattr(record, f.name)) for f in fields(record)
            if f.name not in skip and isinstance(getattr(record, f.name), int | float)}


def kernels_frames(kernels: list[KernelReport], arch: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(resources, occupancy and what limits it, coalescing per kernel; instruction mix per kernel)."""
    resources, mixes = [], []
    for kernel in kernels:
        row: dict[str, Any] = {"kernel": kernel.name}
        if kernel.resources is not None:
            row.update(_numbers(kernel.resources))
        row.update(_occupancy(kernel, arch))
        row["block"] = "×".join(str(v) for v in kernel.launch.block)
        if kernel.launch.grid:
            row["grid"] = "×".join(str(v) for v in kernel.launch.grid)
        words = kernel_row(kernel, arch)  # the engine's words, as the Analyze page and the CLI print them
        row.update({"coalescing": words["coalescing"], "bank conflicts": words["bank conflicts"]})
        if kernel.assumed_scalars:
            row["assumed sizes"] = ", ".join(kernel.assumed_scalars)
        if kernel.source is not None:
            row.update(_numbers(kernel.source, "source."))
        resources.append(row)
        if kernel.mix is not None:
            counts = {k: fmt_number(v) for k, v in kernel.mix.counts.items()}
            mixes.append({"kernel": kernel.name, "total": fmt_number(kernel.mix.total), **counts})
    frame = pd.DataFrame(resources)
    first = [c for c in ("kernel", "registers", "occupancy", "limited by", "blocks/SM", "smem_bytes", "spill_stores",
                         "spill_loads", "block", "grid") if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]], pd.DataFrame(mixes).fillna("")


def _agreement_mark(value: bool | None) -> str:
    return {True: "✓", False: "✗"}.get(value, "–")


def _pct(value: float | None) -> str:
    return f"{value:.0%}" if value is not None else "–"


def static_vs_ncu_frame(rows: list[KernelAgreement]) -> pd.DataFrame:
    """Per kernel: the CPU-side estimate beside ncu's measurement, with whether they agree."""
    return pd.DataFrame([{
        "kernel": row.kernel or "?",
        "load sectors/request": f"{fmt_number(row.static_ld)} → {fmt_number(row.ncu_ld)} "
                                f"{_agreement_mark(row.ld_agree)}",
        "store sectors/request": f"{fmt_number(row.static_st)} → {fmt_number(row.ncu_st)} "
                                 f"{_agreement_mark(row.st_agree)}",
        "occupancy (theoretical)": f"{_pct(row.static_occupancy)} → {_pct(row.ncu_theoretical_occupancy)} "
                                   f"{_agreement_mark(row.occupancy_agree)}",
        "achieved occupancy": _pct(row.ncu_achieved_occupancy),
    } for row in rows])


def ncu_headline(record: NcuRecord) -> str:
    """One line over the ncu table: what was profiled, how long it took, the traffic it measured."""
    summary = record.summary
    parts = [f"{summary.kernels if summary else '?'} kernel(s) on configuration {record.config or '?'!r}",
             f"{fmt_us((summary.duration_s if summary else 0.0) * 1e6)} on the GPU",
             f"{fmt_number(summary.dram_bytes if summary else 0)}B DRAM traffic", f"profiled in {record.seconds:.1f} s"]
    if record.metrics_refused:
        parts.append(f"refused: {', '.join(record.metrics_refused)}")
    return " · ".join(parts)


def energy_text(record: EnergyRecord) -> str:
    """Joules per call, and beside the baseline per call and at matched speed."""
    side = record.candidate
    if side is None:
        return record.reason or "No energy reading for this candidate."
    text = (f"{fmt_number(side.joules_per_call * 1e3)} mJ per call at {fmt_number(side.average_watts)} W "
            f"({fmt_number(side.calls)} calls over {fmt_number(side.seconds)} s)")
    comparison, baseline = record.comparison, record.baseline
    if comparison is not None and baseline is not None:
        text += (f"; {record.baseline_name or 'baseline'}: {fmt_number(baseline.joules_per_call * 1e3)} mJ per call. "
                 f"Candidate/baseline: {comparison.ratio:.2f}× per call, {comparison.matched_speed_ratio:.2f}× at "
                 "matched speed (the faster one idles for the rest of the slower one's time)")
    return text


def roofline_table(record: RooflineRecord) -> pd.DataFrame:
    """The stored point: where the candidate sits, against which roof, and the class it was given."""
    point, bottleneck = record.point, record.bottleneck
    if point is None:
        return pd.DataFrame()
    return pd.DataFrame([{
        "configuration": record.config or TIMED_CONFIG, "FLOP/byte": fmt_number(point.arithmetic_intensity),
        "GFLOP/s": fmt_number(point.achieved_flops / 1e9), "GB/s": fmt_number(point.achieved_bandwidth / 1e9),
        "bound": point.bound, "roof": point.precision, "% of roof": fmt_number(point.pct_of_roof * 100),
        "bottleneck": str(bottleneck) if bottleneck else "",
    }])


FINDING_COLUMNS = ("title", "evidence", "suggestion", "category", "kernel", "line", "severity")


def findings_frame(record: FeedbackRecord) -> pd.DataFrame:
    """The findings behind the feedback text, in the order the tools ranked them."""
    return pd.DataFrame([asdict(f) for f in record.details], columns=list(FINDING_COLUMNS))


def _table(frame: pd.DataFrame) -> None:
    st.dataframe(frame, hide_index=True, width="stretch")


def _section(title: str, present: bool, empty: str, bottleneck: str | None = None) -> bool:
    st.markdown(f"**{title}**" + (f" · bottleneck: `{bottleneck}`" if bottleneck else ""))
    if not present:
        st.caption(empty)
    return present


def _show_ncu(record: NcuRecord) -> None:
    if not record.ok:
        st.warning(f"No ncu metrics for this candidate: {record.reason or 'no reason stored'}. "
                   "The diagnostics below are static estimates.", icon=":material/speed:")
        return
    st.caption(ncu_headline(record))
    if record.static_vs_ncu:
        st.caption("Static estimate → ncu measurement, per kernel")
        _table(static_vs_ncu_frame(record.static_vs_ncu))
    if record.summary is not None:
        with st.expander("All ncu metrics"):
            _table(key_value_frame(asdict(record.summary)))


def show_diagnostics(diagnostics: CandidateDiagnostics, cpu: bool = False, charted: bool = False) -> None:
    """Registers, occupancy and its limiter, instruction mix, ncu metrics, energy, roofline.

    `cpu`: the candidate is C that ran on the CPU, so nothing here is about ptxas, SASS, ncu or NVML.
    `charted`: no roofline diagnostic was stored, but the Roofline chart places it from its measured times and
    the problem's model; the words here say the same as that chart.
    """
    static, ncu, energy, roofline = diagnostics.static, diagnostics.ncu, diagnostics.energy, diagnostics.roofline
    if _section("Static analysis (source)" if cpu else "Static analysis (ptxas, SASS, source)", static is not None,
                "No static analysis stored for this candidate (it may not have compiled).",
                diagnostics.bottlenecks.get("static")):
        resources, mix = kernels_frames(static.kernels, static.arch)
        if not resources.empty:
            _table(resources)
        if not mix.empty:
            st.caption("Instruction mix per kernel")
            _table(mix)
        if static.features:
            with st.expander(f"Source and binary features ({len(static.features)})"):
                _table(key_value_frame(static.features))
    if cpu:
        st.caption("Nsight Compute and NVML energy measure GPU kernels; this candidate ran on the CPU.")
    else:
        if _section("Nsight Compute metrics", ncu is not None, "No ncu profile: profiling runs on a GPU, within its "
                    "time budget.", diagnostics.bottlenecks.get("ncu")):
            _show_ncu(ncu)
        if _section("Energy (NVML)", energy is not None, "No energy reading for this candidate.",
                    diagnostics.bottlenecks.get("energy")):
            st.caption(energy_text(energy))
    if charted:
        empty = ("No roofline diagnostic stored: the Roofline chart places this candidate from its measured times "
                 "and the problem's FLOP and byte model" + (" (no CPU roofs to classify it against)." if cpu else "."))
    else:
        empty = "No roofline: it needs a run that was correct and timed."
    if _section("Roofline", roofline is not None, empty, diagnostics.bottlenecks.get("roofline")):
        table = roofline_table(roofline)
        if not table.empty:
            _table(table)
        classification = roofline.classification
        if classification is not None and classification.reason:
            st.caption(f"Class: {classification.bottleneck}, because {classification.reason}"
                       + ("" if classification.measured else " (not measured)") + ".")
        for note in roofline.notes:
            st.caption(f"Note: {note}")
