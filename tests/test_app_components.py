"""The dashboard's pure parts: the event watcher, chart shaping, code views, diagnostics tables."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest

from app.components import chartdata, charts
from app.components.code import diff_html, diff_stats, highlight_html, language_of, unified_diff
from app.components.diagnostics import configs_frame, flatten, kernels_frames
from app.components.events import EventWatcher, event_seq, filesystem_type, needs_polling, scan_latest
from app.components.problems_view import ProblemFilter, filter_problems, size_bucket
from db.queries import RooflineRow, RoundRow
from engine.verify.records import Verdict

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


def test_best_so_far_only_rises_and_ignores_failures() -> None:
    frame = chartdata.rounds_frame([_row(1, 0, speedup=1.0), _row(2, 1, 1, speedup=2.0),
                                    _row(3, 2, 2, verdict="incorrect"), _row(4, 3, 3, speedup=1.5)])
    best = chartdata.best_so_far(frame)
    assert list(best["best"]) == [1.0, 2.0, 2.0]


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


def test_roofline_frame_reads_configs_keyed_by_name_or_listed() -> None:
    keyed = RooflineRow(1, 0, "correct", {"large": {"arithmetic_intensity": 2.0, "achieved_flops": 4e12,
                                                     "achieved_bytes_per_s": 2e12, "bound": "memory"}})
    listed = RooflineRow(2, 1, "correct", {"configs": [{"name": "large", "arithmetic_intensity": 4.0,
                                                        "achieved_flops": 8e12}]})
    frame = chartdata.roofline_frame([keyed, listed])
    assert list(frame["config"]) == ["large", "large"]
    assert list(frame["gflops"]) == [4000.0, 8000.0]


def test_ceilings_come_from_the_run_else_the_engines_device_table(refinery_home) -> None:
    stored = RooflineRow(1, 0, "correct", {"ceilings": {"device": "X", "dram_bytes_per_s": 1e12,
                                                        "peak_flops": {"fp32": 1e13}, "source": "measured"}})
    (ceiling,) = chartdata.ceilings_from_rows([stored], "NVIDIA H200")
    assert ceiling.source == "measured" and ceiling.bandwidth_bytes_per_s == 1e12
    engine_point = RooflineRow(2, 0, "correct", {"device": "NVIDIA H200", "point": {"precision": "fp16_simt"}})
    (table,) = chartdata.ceilings_from_rows([engine_point], None)
    assert table.source == "table" and table.bandwidth_bytes_per_s == 4.8e12
    assert {"fp32", "fp16", "fp16_simt"} <= set(table.flops_per_s)
    assert chartdata.ceilings_from_rows([], "cpu") == []


def test_the_engines_single_roofline_point_is_read_with_its_class() -> None:
    row = RooflineRow(1, 0, "correct", {"point": {"arithmetic_intensity": 0.5, "achieved_flops": 1e12,
                                                  "achieved_bandwidth": 2e12, "bound": "memory", "roof": 2.4e12,
                                                  "pct_of_roof": 0.42, "precision": "fp32"},
                                        "classification": {"bottleneck": "latency-bound"}, "device": "NVIDIA H200"})
    frame = chartdata.roofline_frame([row, RooflineRow(2, 1, "needs_gpu", {"point": None})])
    assert len(frame) == 1
    assert frame.loc[0, "gbps"] == 2000.0 and frame.loc[0, "pct_of_roof"] == pytest.approx(42.0)
    assert frame.loc[0, "bottleneck"] == "latency-bound"


def test_roof_is_bandwidth_times_intensity_until_the_peak() -> None:
    ceiling = chartdata.Ceilings("d", 1e12, {"fp32": 1e13}, "table")
    roofs = chartdata.roof_lines([ceiling], (0.1, 1000.0))
    low, high = roofs.iloc[0], roofs.iloc[-1]
    assert low["gflops"] == pytest.approx(1e12 * low["ai"] / 1e9)
    assert high["gflops"] == pytest.approx(1e4)


def test_charts_are_cached_templates_filled_with_the_current_rows() -> None:
    frame = chartdata.rounds_frame([_row(1, 0), _row(2, 1, 1, speedup=2.0), _row(3, 2, 2, verdict="incorrect")])
    spec = charts.speedup_chart(frame, chartdata.best_so_far(frame), selected=2)
    assert len(spec["layer"]) == 4  # 1× rule, best so far, points, the selected ring
    assert [p["candidate_id"] for p in spec["datasets"]["points"]] == [1, 2]
    assert spec["datasets"]["selected"] == [{**spec["datasets"]["points"][1]}]
    again = charts.speedup_chart(frame.iloc[:2], chartdata.best_so_far(frame.iloc[:2]), selected=None)
    assert again["datasets"]["selected"] == [] and spec["datasets"]["selected"]  # the cached template is not shared
    strip = charts.verdict_strip(frame)
    assert strip["mark"]["type"] == "tick" and len(strip["datasets"]["points"]) == 3
    assert strip["encoding"]["color"]["scale"]["domain"] == ["correct", "incorrect"]


def test_tree_and_roofline_specs_carry_their_data() -> None:
    frame = chartdata.rounds_frame([_row(1, 0), _row(2, 1, 1, speedup=2.0)])
    nodes, edges = chartdata.tree_layout(frame)
    tree = charts.tree_chart(nodes, edges, selected=2)
    assert len(tree["datasets"]["nodes"]) == 2 and len(tree["datasets"]["edges"]) == 1 and tree["height"] >= 220
    points = chartdata.roofline_frame([RooflineRow(2, 1, "correct", {"large": {
        "arithmetic_intensity": 0.25, "achieved_flops": 1e11, "achieved_bytes_per_s": 4e11}})])
    ceiling = chartdata.Ceilings("H200", 4.8e12, {"fp32": 6.7e13}, "table")
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
    frame = configs_frame([{"name": "large", "hidden": False, "ok": True, "max_abs_error": 0.0,
                            "candidate": {"median_us": 50.0}, "baselines": {"eager": {"median_us": 100.0}}},
                           {"name": "odd", "hidden": True, "ok": False, "first_mismatch": "output 0 at [1]"}])
    assert list(frame["correct"]) == ["yes", "no"]
    assert frame.loc[0, "speedup"] == "2.00×"
    assert frame.loc[1, "first mismatch"] == "output 0 at [1]"


def test_kernel_tables_read_the_engines_static_analysis() -> None:
    kernel = {"name": "k", "symbol": "k", "launch": {"block": [256, 1, 1], "grid": None},
              "resources": {"name": "k", "arch": "sm_90", "registers": 30, "smem_bytes": 4224, "spill_stores": 0},
              "mix": {"kernel": "k", "total": 144, "counts": {"global_load": 5, "shared_store": 8}},
              "occupancy": {"sm_80": {"arch": "sm_80", "warps_per_sm": 64, "max_warps": 64, "limiters": ["warps"]},
                            "sm_90": {"arch": "sm_90", "warps_per_sm": 32, "max_warps": 64,
                                      "limiters": ["registers", "shared_mem"], "blocks_per_sm": 4}}}
    resources, mix = kernels_frames([kernel], "sm_90")
    row = resources.iloc[0]
    assert (row["registers"], row["block"], row["occupancy"], row["limited by"]) == \
        ("30", "256×1×1", "50% (sm_90)", "registers, shared_mem")
    assert (mix.loc[0, "total"], mix.loc[0, "global_load"]) == ("144", "5")


def test_kernel_tables_split_resources_from_instruction_mix() -> None:
    resources, mix = kernels_frames([{"name": "k", "registers": 32, "occupancy": 0.5, "limiter": "registers",
                                      "instruction_mix": {"fp32": 120, "memory": 40}}])
    assert resources.loc[0, "occupancy"] == "50%" and resources.loc[0, "limiter"] == "registers"
    assert mix.loc[0, "fp32"] == "120"


def test_flatten_names_nested_metrics_by_kernel() -> None:
    flat = flatten({"kernels": [{"name": "k1", "dram__throughput": 80.5}], "energy_j": 1.5})
    assert flat == {"kernels.k1.dram__throughput": 80.5, "energy_j": 1.5}


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
