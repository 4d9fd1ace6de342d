"""The dashboard's pure parts: the event watcher, chart shaping, code views, diagnostics tables."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

from app.components import chartdata, charts
from app.components.code import diff_html, diff_stats, highlight_html, language_of, unified_diff
from app.components.diagnostics import (
    configs_frame,
    energy_text,
    findings_frame,
    flatten,
    kernels_frames,
    ncu_headline,
    roofline_table,
)
from app.components.events import EventWatcher, event_seq, filesystem_type, needs_polling, scan_latest
from app.components.problems_view import ProblemFilter, filter_problems, size_bucket
from app.testing import timed_stats
from db.queries import RooflineRow, RoundRow, TimingRow
from engine.analysis.profile.devices import DeviceCeilings, MeasuredCeilings, match_device, store_measured
from engine.analysis.profile.ncu_record import NcuRecord
from engine.analysis.profile.roofline import Bottleneck, Classification, RooflinePoint, RooflineRecord, roofline_point
from engine.analysis.record import StaticReport
from engine.feedback.model import FeedbackRecord, Finding
from engine.problems import get_problem
from engine.schema.verdict import Verdict
from engine.store.diagnostics import RooflineEntry, configs_of, roofline_entries, timing_entries
from engine.verify.judge.energy_meter import EnergyRecord

# --- event watcher ----------------------------------------------------------------------------


def test_event_seq_reads_only_event_file_names() -> None:
    assert event_seq("/x/events/00000012.json") == 12
    assert event_seq("00000012.tmp") is None
    assert event_seq(".00000012.json.tmp") is None
    assert event_seq("notes.json") is None


def test_scan_latest_finds_the_highest_event_and_tolerates_a_missing_folder(tmp_path: Path) -> None:
    assert scan_latest(tmp_path / "nope") == 0
    for seq in (3, 11, 7):
        (tmp_path / f"{seq:08d}.json").write_text("{}")
    assert scan_latest(tmp_path) == 11


def _publish(folder: Path, seq: int) -> None:
    tmp = folder / f"{seq:08d}.tmp"
    tmp.write_text("{}")
    os.replace(tmp, folder / f"{seq:08d}.json")


@pytest.mark.parametrize("polling", [False, True], ids=["inotify", "polling"])
def test_watcher_sees_an_event_file_appear(tmp_path: Path, polling: bool) -> None:
    watcher = EventWatcher(force_polling=polling, poll_interval_s=0.05)
    try:
        folder = tmp_path / "events"
        mode = watcher.watch(folder)
        assert mode == ("polling" if polling else "inotify")
        assert watcher.latest(folder) == 0
        _publish(folder, 5)
        assert watcher.wait_for(folder, 0, timeout_s=5) == 5
        assert watcher.latest(folder) == 5
    finally:
        watcher.stop()


def test_watcher_starts_from_events_already_written(tmp_path: Path) -> None:
    (tmp_path / "00000009.json").write_text("{}")
    watcher = EventWatcher()
    try:
        assert watcher.latest(tmp_path) == 9
    finally:
        watcher.stop()


def test_watcher_falls_back_to_polling_when_inotify_refuses(tmp_path: Path, monkeypatch) -> None:
    watcher = EventWatcher(poll_interval_s=0.05)
    native = watcher._observer(False)

    def refuse(*args, **kwargs):
        raise OSError(28, "inotify watch limit reached")

    monkeypatch.setattr(native, "schedule", refuse)
    try:
        assert watcher.watch(tmp_path) == "polling"
        _publish(tmp_path, 2)
        assert watcher.wait_for(tmp_path, 0, timeout_s=5) == 2
    finally:
        watcher.stop()


def test_remote_filesystems_are_polled(tmp_path: Path) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("server:/export /mnt/nfs nfs4 rw 0 0\n/dev/sda1 / ext4 rw 0 0\n")
    assert filesystem_type(Path("/mnt/nfs/runs/1"), mounts) == "nfs4"
    assert filesystem_type(Path("/home/x"), mounts) == "ext4"
    assert isinstance(needs_polling(tmp_path), bool)


# --- chart data -------------------------------------------------------------------------------

def _row(cid: int, step: int, parent: int | None = None, verdict: str | None = "correct",
         speedup: float | None = 1.0) -> RoundRow:
    return RoundRow(candidate_id=cid, step=step, sample=0, parent_id=parent, depth=0, origin="library",
                    strategy="naive", language="cuda", created_at=pd.Timestamp("2026-01-01"), verdict=verdict,
                    speedup=speedup if verdict == "correct" else None)


def _pooled(levels: dict[int, tuple[float, ...]], same_code: dict[int, int] | None = None):
    """The run's codes pooled as the run page pools them: candidate id -> speedups of its evaluations, oldest
    first; `same_code` maps a candidate to the earlier one whose code it repeats."""
    from db.labels import CandidateEvidence, Measurement
    from engine.rank.pooled import pool

    same_code = same_code or {}
    evidence = [CandidateEvidence(
        id=cid, problem_slug="gemm", language="c", origin="library", strategy=None, source="", source_hash=str(cid),
        created_at=pd.Timestamp("2026-01-01"), equivalence=f"code-{same_code.get(cid, cid)}",
        measurements=(Measurement("cpu", 100.0 / speeds[-1], speeds[-1], baseline="c-reference", config="small",
                                  baseline_us=100.0, levels=tuple(1 / s for s in speeds)),))
        for cid, speeds in levels.items()]
    (context,) = pool(evidence)
    return context


def test_best_so_far_only_rises_and_ignores_failures() -> None:
    frame = chartdata.rounds_frame([_row(1, 0, speedup=1.0), _row(2, 1, 1, speedup=2.0),
                                    _row(3, 2, 2, verdict="incorrect"), _row(4, 3, 3, speedup=1.5)])
    best = chartdata.best_so_far(frame, _pooled({1: (1.0,), 2: (2.0,), 4: (1.5,)}))
    assert list(best["step"]) == [0, 1, 3] and list(best["best"]) == pytest.approx([1.0, 2.0, 2.0])
    assert chartdata.best_so_far(frame, None).empty


def test_best_so_far_follows_pooled_medians_not_the_latest_evaluations_running_maximum() -> None:
    # Round 1's code measured 2.82x at its latest evaluation but 1.80x and 1.83x before: its pooled median is
    # 1.83x, under round 2's code measured 1.90x, 2.00x and 2.10x. A running maximum of latest speedups
    # would rise to 2.82x at round 1 and stay there; the run's best by the pooled rule is round 2's 2.0x.
    frame = chartdata.rounds_frame([_row(1, 0, speedup=1.0), _row(2, 1, 1, speedup=2.82), _row(3, 2, 2, speedup=2.1),
                                    _row(4, 3, 3, speedup=1.7)])
    pooled = _pooled({1: (1.0,), 2: (1.80, 1.83, 2.82), 3: (1.9, 2.0, 2.1), 4: (1.7,)})
    best = chartdata.best_so_far(frame, pooled)
    assert list(best["step"]) == [0, 1, 2, 3]
    assert list(best["best"]) == pytest.approx([1.0, 1.83, 2.0, 2.0])
    assert list(best["candidate_id"]) == [1, 2, 3, 3]
    assert best["best"].max() < frame["speedup"].max()


def test_best_so_far_counts_a_repeated_code_from_its_first_round_with_all_its_evaluations() -> None:
    # Round 3 repeats round 1's code (the same code, re-measured): one source, first tried at round 1, its
    # median over all three evaluations (1.5x) is what the line shows from round 1 on.
    frame = chartdata.rounds_frame([_row(1, 0, speedup=1.2), _row(2, 1, speedup=1.1), _row(3, 2, speedup=1.5)])
    pooled = _pooled({1: (1.2, 1.6), 2: (1.1,), 3: (1.5,)}, same_code={3: 1})
    best = chartdata.best_so_far(frame, pooled)
    assert list(best["step"]) == [0, 1] and list(best["best"]) == pytest.approx([1.5, 1.5])


def test_thin_keeps_the_selected_and_the_best_of_each_round() -> None:
    rows = [_row(i, i // 20, speedup=1 + (i * 7 % 20) / 10) for i in range(1, 5001)]
    frame = chartdata.rounds_frame(rows)
    thinned = chartdata.thin(frame, keep_ids=[4321], max_points=800)
    assert len(thinned) <= 800
    assert 4321 in set(thinned["candidate_id"])
    pd.testing.assert_series_equal(thinned.groupby("step")["speedup"].max(), frame.groupby("step")["speedup"].max())


def test_tree_layout_puts_a_chain_on_one_line_and_fans_out_children() -> None:
    chain = chartdata.rounds_frame([_row(1, 0), _row(2, 1, 1), _row(3, 2, 2)])
    nodes, edges = chartdata.tree_layout(chain)
    assert list(nodes["x"]) == [0, 1, 2] and nodes["y"].nunique() == 1
    assert len(edges) == 2
    fan = chartdata.rounds_frame([_row(1, 0), _row(2, 1, 1), _row(3, 1, 1), _row(4, 1, 1)])
    nodes, _ = chartdata.tree_layout(fan)
    children = nodes[nodes["parent_id"].notna()]
    assert children["y"].nunique() == 3
    assert nodes.loc[nodes["candidate_id"] == 1, "y"].item() == children["y"].mean()


def test_tree_layout_survives_a_very_deep_chain() -> None:
    rows = [_row(1, 0)] + [_row(i, i - 1, i - 1) for i in range(2, 3001)]
    nodes, edges = chartdata.tree_layout(chartdata.rounds_frame(rows))
    assert nodes["x"].max() == 2999 and len(edges) == 2999


def test_tree_subset_keeps_ancestors_so_the_tree_stays_connected() -> None:
    rows = [_row(1, 0)] + [_row(i, i - 1, i - 1, speedup=float(i)) for i in range(2, 2001)]
    subset = chartdata.tree_subset(chartdata.rounds_frame(rows), selected=1500, max_nodes=300)
    ids = set(subset["candidate_id"])
    assert 1500 in ids and 1 in ids
    assert all(pd.isna(p) or int(p) in ids for p in subset["parent_id"])


def _point(**changes) -> RooflinePoint:
    fields = {"arithmetic_intensity": 0.5, "achieved_flops": 1e12, "achieved_bandwidth": 2e12, "precision": "fp32",
              "peak_flops": 6.69e13, "peak_bandwidth": 4.8e12, "bound": "memory", "roof": 2.4e12,
              "pct_of_roof": 0.42, "source": "ncu", "seconds": 1e-4}
    return RooflinePoint(**{**fields, **changes})


def _placed(cid: int, record: RooflineRecord, verdict: str = "correct") -> RooflineEntry:
    return RooflineEntry(cid, cid - 1, verdict, record)


def test_roofline_frame_plots_the_stored_point_with_its_class_and_configuration() -> None:
    placed = RooflineRecord(_point(), Classification(Bottleneck.LATENCY, "42% of the memory roof"), "NVIDIA H200",
                            config="large")
    frame = chartdata.roofline_frame([_placed(1, placed), _placed(2, RooflineRecord(), "needs_gpu")])
    assert len(frame) == 1  # a record with no point (no timing) places nothing
    assert (frame.loc[0, "config"], frame.loc[0, "gflops"], frame.loc[0, "gbps"]) == ("large", 1000.0, 2000.0)
    assert frame.loc[0, "pct_of_roof"] == pytest.approx(42.0) and frame.loc[0, "bottleneck"] == "latency-bound"


def test_a_copy_is_plotted_by_bandwidth_alone() -> None:
    copy = roofline_point(0.0, 1e9, 1e-3, match_device("NVIDIA H200"), "fp32")
    frame = chartdata.roofline_frame([_placed(1, RooflineRecord(copy))])
    assert frame["ai"].isna().all() and frame["gflops"].isna().all() and frame.loc[0, "gbps"] == 1000.0


def test_a_roofline_row_stored_before_it_named_its_configuration_reads_as_the_timed_one() -> None:
    old = {"point": dict(vars(_point())), "device": "NVIDIA H200", "notes": [],
           "classification": {"bottleneck": "memory-bound", "reason": "at the memory roof", "measured": True}}
    (entry,) = roofline_entries([RooflineRow(1, 0, "correct", old)])
    assert entry.record.config is None and entry.record.bottleneck is Bottleneck.MEMORY
    assert chartdata.roofline_frame([entry]).loc[0, "config"] == chartdata.TIMED_CONFIG


def test_ceilings_are_the_engines_table_for_the_device_the_points_name(refinery_home) -> None:
    entry = _placed(1, RooflineRecord(_point(precision="fp16_simt"), device="NVIDIA H200"))
    (table,) = chartdata.run_ceilings([entry], None)
    assert (table.name, table.source, table.dram_bandwidth) == ("NVIDIA H200", "table", 4.8e12)
    assert set(table.peaks) == {"fp64", "fp32", "fp16", "fp16_simt"}  # the common roofs and the one it was held to
    assert table.peaks["fp32"] == match_device("NVIDIA H200").peaks["fp32"]
    assert chartdata.run_ceilings([], "cpu") == []


def test_ceilings_measured_on_the_device_are_shown_beside_the_table(refinery_home) -> None:
    store_measured(MeasuredCeilings("NVIDIA H200", 4.1e12, {"fp16": 7.0e14, "fp32": 5.0e13}, measured_at=0.0))
    table, measured = chartdata.device_ceilings("NVIDIA H200")
    assert table.source == "table" and measured.source == "measured"
    assert (measured.dram_bandwidth, measured.peaks) == (4.1e12, {"fp16": 7.0e14, "fp32": 5.0e13})


def test_without_stored_points_the_problems_model_places_the_measured_times() -> None:
    problem = get_problem("matrix-transpose")
    config = problem.largest_config
    stored = [{"name": config.name, "hidden": False, "ok": True, "candidate": timed_stats(100.0)},
              {"name": "not-a-config", "hidden": False, "ok": True, "candidate": timed_stats(1.0)}]
    frame = chartdata.model_roofline_frame(timing_entries([TimingRow(7, 2, "correct", stored)]), problem)
    assert list(frame["candidate_id"]) == [7] and frame.loc[0, "config"] == config.name
    assert frame.loc[0, "gbps"] == pytest.approx(problem.min_bytes(config) / 1e-4 / 1e9)
    assert frame["ai"].isna().all()  # a transpose does no arithmetic: bandwidth only


def test_roof_is_bandwidth_times_intensity_until_the_peak() -> None:
    ceiling = DeviceCeilings("d", ("d",), (9, 0), 1, 0, 1e12, {"fp32": 1e13})
    roofs = chartdata.roof_lines([ceiling], (0.1, 1000.0))
    low, high = roofs.iloc[0], roofs.iloc[-1]
    assert low["gflops"] == pytest.approx(1e12 * low["ai"] / 1e9)
    assert high["gflops"] == pytest.approx(1e4)


def test_charts_are_cached_templates_filled_with_the_current_rows() -> None:
    frame = chartdata.rounds_frame([_row(1, 0), _row(2, 1, 1, speedup=2.0), _row(3, 2, 2, verdict="incorrect")])
    pooled = _pooled({1: (1.0,), 2: (2.0,)})
    spec = charts.speedup_chart(frame, chartdata.best_so_far(frame, pooled), selected=2)
    assert len(spec["layer"]) == 4  # 1× rule, best so far, points, the selected ring
    assert [p["candidate_id"] for p in spec["datasets"]["points"]] == [1, 2]
    assert spec["datasets"]["selected"] == [{**spec["datasets"]["points"][1]}]
    again = charts.speedup_chart(frame.iloc[:2], chartdata.best_so_far(frame.iloc[:2], pooled), selected=None)
    assert again["datasets"]["selected"] == [] and spec["datasets"]["selected"]  # the cached template is not shared
    strip = charts.verdict_strip(frame)
    assert strip["mark"]["type"] == "tick" and len(strip["datasets"]["points"]) == 3
    assert strip["encoding"]["color"]["scale"]["domain"] == ["correct", "incorrect"]


def test_tree_and_roofline_specs_carry_their_data() -> None:
    frame = chartdata.rounds_frame([_row(1, 0), _row(2, 1, 1, speedup=2.0)])
    nodes, edges = chartdata.tree_layout(frame)
    tree = charts.tree_chart(nodes, edges, selected=2)
    assert len(tree["datasets"]["nodes"]) == 2 and len(tree["datasets"]["edges"]) == 1 and tree["height"] >= 220
    points = chartdata.roofline_frame([_placed(2, RooflineRecord(_point(
        arithmetic_intensity=0.25, achieved_flops=1e11, achieved_bandwidth=4e11), config="large"))])
    ceiling = DeviceCeilings("H200", ("H200",), (9, 0), 132, 0, 4.8e12, {"fp32": 6.7e13})
    roof = charts.roofline_chart(points, [ceiling], selected=2)
    assert roof["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
    assert roof["datasets"]["selected"][0]["gflops"] == 100.0
    assert any(r["roof"].startswith("fp32") for r in roof["datasets"]["roofs"])
    assert roof["datasets"]["slope"][0]["roof"] == "DRAM 4.80 TB/s"


# --- code and tables --------------------------------------------------------------------------

def test_highlighted_code_is_inline_styled_html_with_the_source() -> None:
    html = highlight_html("__global__ void k(float* x) { x[0] = 1; }", "cuda")
    assert "style=" in html and "__global__" in html and "<script" not in html


def test_language_is_guessed_when_not_stored() -> None:
    assert language_of(None, "__global__ void k() {}") == "cuda"
    assert language_of(None, "#include <stdio.h>") == "c"
    assert language_of("python", "") == "python"


def test_diff_counts_added_and_removed_lines() -> None:
    diff = unified_diff("a\nb\nc\n", "a\nB\nc\nd\n")
    assert diff_stats(diff) == (2, 1)
    assert "<span" in diff_html(diff)


def test_configs_frame_shows_errors_times_and_speedup() -> None:
    frame = configs_frame(configs_of([
        {"name": "large", "hidden": False, "ok": True, "max_abs_error": 0.0, "candidate": timed_stats(50.0),
         "baselines": {"eager": timed_stats(100.0)}},
        {"name": "odd", "hidden": True, "ok": False, "first_mismatch": "output 0 at [1]"}]))
    assert list(frame["correct"]) == ["yes", "no"]
    assert frame.loc[0, "speedup"] == "2.00×"
    assert frame.loc[1, "first mismatch"] == "output 0 at [1]"


def test_kernel_tables_read_the_engines_static_report() -> None:
    kernel = {"name": "k", "symbol": "k", "launch": {"kernel": "k", "block": [256, 1, 1], "grid": None},
              "resources": {"name": "k", "arch": "sm_90", "registers": 30, "smem_bytes": 4224, "spill_stores": 0},
              "mix": {"kernel": "k", "total": 144, "counts": {"global_load": 5, "shared_store": 8}},
              "occupancy": {"sm_80": {"arch": "sm_80", "threads_per_block": 256, "blocks_per_sm": 8,
                                      "warps_per_sm": 64, "max_warps": 64, "limiters": ["warps"]},
                            "sm_90": {"arch": "sm_90", "threads_per_block": 256, "warps_per_sm": 32, "max_warps": 64,
                                      "limiters": ["registers", "shared_mem"], "blocks_per_sm": 4}}}
    report = StaticReport.from_json({"ok": True, "language": "cuda", "arch": "sm_90", "kernels": [kernel],
                                     "features": {}})
    resources, mix = kernels_frames(report.kernels, report.arch)
    row = resources.iloc[0]
    assert (row["registers"], row["block"], row["occupancy"], row["limited by"], row["blocks/SM"]) == \
        ("30", "256×1×1", "50% (sm_90)", "registers, shared_mem", 4)
    assert row["coalescing"] == "–"  # no access estimates in this row: the engine's words for "not known"
    assert (mix.loc[0, "total"], mix.loc[0, "global_load"]) == ("144", "5")


def test_flatten_names_nested_metrics_by_their_path() -> None:
    flat = flatten({"per_kernel": {"k1": {"dram__bytes_read.sum": 80.5}}, "top_stalls": [("long_scoreboard", 38.2)]})
    assert flat == {"per_kernel.k1.dram__bytes_read.sum": 80.5, "top_stalls": "long_scoreboard 38.2"}


def test_the_ncu_headline_reads_the_record() -> None:
    record = NcuRecord.from_json({"ok": True, "seconds": 6.1, "config": "large", "metrics_refused": ["x.sum"],
                                  "summary": {"kernels": 2, "duration_s": 9.8e-5, "dram_bytes_read": 2e6,
                                              "dram_bytes_written": 1e6, "flops": {}, "achieved_occupancy": None,
                                              "theoretical_occupancy": None, "ld_sectors_per_request": None,
                                              "st_sectors_per_request": None, "shared_ld_wavefronts_per_request": None,
                                              "shared_st_wavefronts_per_request": None, "shared_bank_conflicts": 0.0,
                                              "top_stalls": [], "tensor_pipe_pct": None, "sm_throughput_pct": None,
                                              "dram_throughput_pct": None, "grid_blocks": None,
                                              "block_threads": None}})
    assert ncu_headline(record) == ("2 kernel(s) on configuration 'large' · 98.0 µs on the GPU · 3MB DRAM traffic "
                                    "· profiled in 6.1 s · refused: x.sum")


def test_energy_reads_as_joules_per_call_beside_the_baseline_or_says_why_not() -> None:
    def side(joules: float, watts: float, calls: int, seconds: float) -> dict:
        return {"joules_per_call": joules, "seconds_per_call": seconds / calls, "calls": calls, "seconds": seconds,
                "joules": joules * calls, "average_watts": watts, "idle_watts": 80.0}

    record = EnergyRecord.from_json({
        "device": "NVIDIA H200", "candidate": side(0.02, 400.0, 100, 1.0), "baseline_name": "eager",
        "baseline": side(0.05, 500.0, 40, 1.0),
        "comparison": {"candidate_joules": 0.02, "baseline_joules": 0.05, "ratio": 0.4, "matched_speed_joules": 0.045,
                       "matched_speed_ratio": 0.9}})
    text = energy_text(record)
    assert text.startswith("20 mJ per call at 400 W (100 calls over 1 s); eager: 50 mJ per call.")
    assert "0.40× per call, 0.90× at matched speed" in text
    assert energy_text(EnergyRecord(reason="energy not measured: no NVML")) == "energy not measured: no NVML"


def test_the_roofline_table_shows_the_point_as_a_percentage_of_its_roof() -> None:
    table = roofline_table(RooflineRecord(_point(), Classification(Bottleneck.LATENCY, "far from the roofs")))
    assert table.loc[0, "configuration"] == chartdata.TIMED_CONFIG
    assert (table.loc[0, "% of roof"], table.loc[0, "bottleneck"]) == ("42", "latency-bound")
    assert roofline_table(RooflineRecord()).empty


def test_findings_are_tabled_in_the_tools_order_with_every_column() -> None:
    finding = Finding("coalescing", "memory/uncoalesced-access", "uncoalesced stores", "32 sectors per request",
                      "stage a tile", 0.8, 32.0, "k", 12)
    frame = findings_frame(FeedbackRecord(["coalescing"], [finding]))
    assert list(frame.columns) == ["title", "evidence", "suggestion", "category", "kernel", "line", "severity"]
    assert frame.loc[0, "line"] == 12


def test_problem_filter_combines_text_kind_tag_and_size() -> None:
    from engine.problems import scan_all

    problems = scan_all().problems
    transpose = [p for p in problems if p.slug == "matrix-transpose" and p.kind == "c"]
    assert filter_problems(problems, ProblemFilter(text="matrix transpose", kinds=("c",), tags=("transpose",))) \
        == transpose
    assert filter_problems(problems, ProblemFilter(kinds=("nope",))) == []
    bucket = size_bucket(transpose[0])
    assert transpose[0] in filter_problems(problems, ProblemFilter(sizes=(bucket,)))


def test_watcher_latency_is_well_under_the_live_interval(tmp_path: Path) -> None:
    watcher = EventWatcher()
    try:
        watcher.watch(tmp_path)
        started = time.monotonic()
        _publish(tmp_path, 1)
        assert watcher.wait_for(tmp_path, 0, timeout_s=5) == 1
        assert time.monotonic() - started < 0.5
    finally:
        watcher.stop()


@pytest.mark.parametrize("verdict", [v.value for v in Verdict])
def test_every_engine_verdict_has_its_own_word_and_colour(verdict: str) -> None:
    from app.components import style

    assert style.verdict_key(verdict) == verdict
    assert verdict in style.VERDICT_ORDER and style.verdict_words(verdict) != style.VERDICT_WORDS["pending"]


def test_times_are_three_figures_at_most_so_a_metric_is_never_cut() -> None:
    from app.components.style import fmt_us

    assert [fmt_us(v) for v in (1578.0, 15780.0, 157.8, 15.78, 1.578, 2.5e6, None)] == \
        ["1.58 ms", "15.8 ms", "158 µs", "15.8 µs", "1.58 µs", "2.50 s", "–"]
    assert all(len(fmt_us(v)) <= 7 for v in (0.001234, 999.9, 123456.0, 9.99e8))


def test_code_panes_wrap_long_lines_inside_the_pane() -> None:
    long_line = "x = " + " + ".join(f"value_{i}" for i in range(80))
    for html_text in (highlight_html(long_line, "python"), diff_html(unified_diff("a = 1", long_line))):
        assert "white-space:pre-wrap" in html_text and "overflow-wrap:anywhere" in html_text
