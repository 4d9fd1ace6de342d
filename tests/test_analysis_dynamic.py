"""The dynamic side without a GPU: ncu's CSV parsing and failure handling (against stand-in ncu
executables), energy arithmetic, the device table, roofline placement and the bottleneck class."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from engine.analysis.profile import devices
from engine.analysis.profile.ncu import parse_raw_csv, profile_command, summarise, unit_scale
from engine.analysis.profile.roofline import Bottleneck, classify, precision_for, roofline_point
from engine.verify.judge.energy_meter import EnergyMeasurement, EnergyUnavailable, compare_energy, measure_energy

RAW_CSV = '''==PROF== Connected to process 123
program output line
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC",\
"gpu__time_duration.sum","dram__bytes_read.sum","dram__bytes_write.sum",\
"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",\
"sm__warps_active.avg.pct_of_peak_sustained_active","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",\
"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","launch__grid_size"
"","","","","","","","","","","","us","Mbyte","Mbyte","sector","","%","inst","",""
"0","123","python","host","copy_strided(const float *, float *, int, int)","1","7","(256, 1, 1)","(65536, 1, 1)",\
"0","9.0","296.80","1,073.74","67.11","16,777,216","524,288","82.5","0","12.5","65,536"
"1","123","python","host","add_naive(const float *, const float *, float *, int)","1","7","(256, 1, 1)",\
"(65536, 1, 1)","0","9.0","57.80","134.22","67.11","4,194,304","1,048,576","74.0","1,000","53.3","65,536"
'''


def _fake_ncu(tmp_path: Path, body: str) -> str:
    script = tmp_path / "ncu"
    script.write_text(f"#!{sys.executable}\nimport sys, time\nargs = sys.argv[1:]\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_raw_csv_rows_become_kernels_with_values_in_base_units():
    kernels = parse_raw_csv(RAW_CSV)
    assert [k.name.split("(")[0] for k in kernels] == ["copy_strided", "add_naive"]
    strided = kernels[0]
    assert strided.get("gpu__time_duration.sum") == pytest.approx(296.8e-6)
    assert strided.get("dram__bytes_read.sum") == pytest.approx(1073.74e6)
    assert strided.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum") == 16777216  # thousands separators
    assert strided.info["Grid Size"] == "(65536, 1, 1)"


def test_units_scale_to_bytes_seconds_and_hertz():
    assert [unit_scale(u) for u in ("Gbyte", "us", "msecond", "Ghz", "%", "sector")] == [1e9, 1e-6, 1e-3, 1e9, 1, 1]


def test_summary_aggregates_sectors_per_request_by_requests_and_occupancy_by_time():
    summary = summarise(parse_raw_csv(RAW_CSV))
    assert summary.ld_sectors_per_request == pytest.approx((16777216 + 4194304) / (524288 + 1048576))
    assert summary.per_kernel["copy_strided(const float *, float *, int, int)"]["ld_sectors"] == 16777216
    assert summary.achieved_occupancy == pytest.approx((0.825 * 296.8 + 0.74 * 57.8) / (296.8 + 57.8))
    assert summary.flops["fp32"] == 2000
    assert summary.top_stalls[0][0] == "long_scoreboard"
    assert summary.grid_blocks == 65536


def test_profile_passes_clock_control_none_and_csv_and_parses_the_output(tmp_path):
    ncu = _fake_ncu(tmp_path, f"""
assert args[:6] == ["--clock-control", "none", "--csv", "--page", "raw", "--target-processes"], args
assert args[6] == "application-only", args
assert args[-2:] == ["./prog", "7"], args
sys.stdout.write({RAW_CSV!r})""")
    profile = profile_command(["./prog", "7"], budget_s=30, ncu=ncu)
    assert profile.ok, profile.reason
    assert len(profile.kernels) == 2 and profile.summary().kernels == 2
    assert profile.log.startswith("==PROF== Connected to process 123")


def test_following_child_processes_is_asked_for(tmp_path):
    ncu = _fake_ncu(tmp_path, f"""
assert args[6] == "all", args
sys.stdout.write({RAW_CSV!r})""")
    assert profile_command(["./prog"], budget_s=30, ncu=ncu, follow_children=True).ok


def test_a_kernel_filter_and_launch_limits_reach_ncu(tmp_path):
    ncu = _fake_ncu(tmp_path, f"""
joined = " ".join(args)
assert "--kernel-name regex:add" in joined and "--launch-skip 2" in joined and "--launch-count 1" in joined
sys.stdout.write({RAW_CSV!r})""")
    assert profile_command(["./prog"], budget_s=30, ncu=ncu, kernel_regex="add", launch_skip=2, launch_count=1).ok


def test_missing_ncu_degrades_with_a_reason(monkeypatch):
    from engine.analysis.profile import ncu as ncu_module

    monkeypatch.setattr(ncu_module, "_default_ncu", lambda: None)
    profile = profile_command(["./prog"], budget_s=5)
    assert not profile.ok and "ncu not found" in profile.reason


def test_refused_counters_degrade_with_a_reason(tmp_path):
    ncu = _fake_ncu(tmp_path, """
print("==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters")
sys.exit(1)""")
    profile = profile_command(["./prog"], budget_s=30, ncu=ncu)
    assert not profile.ok and "refused" in profile.reason


def test_the_time_budget_stops_ncu(tmp_path):
    ncu = _fake_ncu(tmp_path, "time.sleep(30)")
    profile = profile_command(["./prog"], budget_s=1.5, ncu=ncu)
    assert not profile.ok and "budget" in profile.reason
    assert profile.seconds < 10


def test_a_metric_the_chip_lacks_is_dropped_and_the_run_retried(tmp_path):
    ncu = _fake_ncu(tmp_path, f"""
metrics = args[args.index("--metrics") + 1]
if "sm__bogus.sum" in metrics:
    print("==ERROR== Failed to find metric sm__bogus.sum")
    sys.exit(1)
sys.stdout.write({RAW_CSV!r})""")
    profile = profile_command(["./prog"], metrics=["gpu__time_duration.sum", "sm__bogus.sum"], budget_s=30, ncu=ncu)
    assert profile.ok and profile.missing_metrics == ["sm__bogus.sum"]


def _energy(joules: float, seconds: float, idle: float = 80.0) -> EnergyMeasurement:
    return EnergyMeasurement(joules, seconds, 1000, seconds * 1000, joules * 1000, joules / seconds, idle, "GPU")


def test_energy_comparison_per_call_and_at_the_baselines_speed():
    candidate, baseline = _energy(0.05, 1e-4), _energy(0.08, 2e-4)
    comparison = compare_energy(candidate, baseline)
    assert comparison.ratio == pytest.approx(0.625)
    # the faster candidate idles for the 100 µs it saved: +80 W x 1e-4 s
    assert comparison.matched_speed_joules == pytest.approx(0.05 + 80 * 1e-4)
    assert comparison.matched_speed_ratio == pytest.approx((0.05 + 0.008) / 0.08)


def test_energy_without_nvml_is_unavailable_not_a_crash(monkeypatch):
    import pynvml

    def refuse():
        raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    monkeypatch.setattr(pynvml, "nvmlInit", refuse)
    with pytest.raises(EnergyUnavailable):
        measure_energy(lambda: None, min_seconds=0.1)


@pytest.mark.parametrize(("name", "entry"), [
    ("NVIDIA H200", "NVIDIA H200"), ("NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM"),
    ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"), ("NVIDIA A100-SXM4-40GB", "NVIDIA A100 40GB"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB SXM"), ("NVIDIA L40S", "NVIDIA L40S"),
    ("NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090"), ("NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090"),
])
def test_device_names_as_torch_prints_them_find_their_table_entry(name, entry):
    assert devices.match_device(name).name == entry


def test_an_unknown_device_has_no_table_entry():
    assert devices.match_device("Tesla K80") is None


def test_measured_ceilings_are_stored_and_override_the_table_when_preferred(tmp_path):
    path = tmp_path / "device_ceilings.json"
    measured = devices.MeasuredCeilings("NVIDIA H200", 4.1e12, {"bf16": 7.0e14}, 0.0, "2.11")
    devices.store_measured(measured, path)
    stored = devices.load_measured(path)
    assert stored["NVIDIA H200"].dram_bandwidth == 4.1e12
    effective = devices.ceilings_for("NVIDIA H200", stored, prefer_measured=True)
    assert effective.dram_bandwidth == 4.1e12 and effective.peak("bf16") == 7.0e14
    assert effective.peak("fp32") == devices.match_device("NVIDIA H200").peak("fp32")


def test_the_roof_is_bandwidth_times_intensity_below_the_ridge():
    h200 = devices.match_device("H200")
    point = roofline_point(flops=1e9, dram_bytes=1e9, seconds=1e9 / 4.0e12, device=h200, precision="fp32")
    assert point.bound == "memory"
    assert point.roof == pytest.approx(4.8e12)
    assert point.pct_of_roof == pytest.approx(4.0 / 4.8)


def test_a_kernel_with_no_flops_is_held_to_bandwidth():
    point = roofline_point(0.0, 1e9, 1e-3, devices.match_device("H200"), "fp32")
    assert point.bound == "memory" and point.pct_of_roof == pytest.approx(1e12 / 4.8e12)


def test_the_roof_follows_the_tensor_core_path_the_sass_uses():
    h200 = devices.match_device("H200")
    assert precision_for("float16", uses_tensor_cores=True, uses_wgmma=False, device=h200) == "fp16_mma_sync"
    assert precision_for("float16", uses_tensor_cores=True, uses_wgmma=True, device=h200) == "fp16"
    assert precision_for("float32") == "fp32"
    assert h200.peak("fp16_mma_sync") < h200.peak("fp16")


def test_bottleneck_classes():
    h200 = devices.match_device("H200")
    near_bandwidth = roofline_point(1e9, 1e10, 1e10 / 4.5e12, h200, "fp32")
    far = roofline_point(1e9, 1e10, 1e10 / 0.5e12, h200, "fp32")
    assert classify(near_bandwidth).bottleneck is Bottleneck.MEMORY
    compute = roofline_point(1e13, 1e9, 1e13 / 60e12, h200, "fp32")
    assert classify(compute).bottleneck is Bottleneck.COMPUTE
    assert classify(far, occupancy=0.25).bottleneck is Bottleneck.LATENCY
    assert classify(far, seconds_per_launch=3e-6).bottleneck is Bottleneck.LAUNCH
    assert classify(None, arithmetic_intensity=0.1, ridge=14).bottleneck is Bottleneck.MEMORY
    assert not classify(None, arithmetic_intensity=0.1, ridge=14).measured


def test_device_ceilings_command_shows_the_table_without_a_gpu(refinery_home, monkeypatch):
    from typer.testing import CliRunner

    from engine.cli import app

    monkeypatch.setattr(devices, "current_device_name", lambda index=0: None)
    result = CliRunner().invoke(app, ["device", "ceilings"])
    assert result.exit_code == 0, result.output
    assert "H200" in result.output and "No GPU" in result.output


def test_an_unexplained_rejection_falls_back_to_the_verified_metric_set(tmp_path):
    ncu = _fake_ncu(tmp_path, f"""
metrics = args[args.index("--metrics") + 1]
if "sm__pipe_tensor_cycles_active" in metrics:
    print("==ERROR== the metric list could not be collected")
    sys.exit(1)
sys.stdout.write({RAW_CSV!r})""")
    profile = profile_command(["./prog"], budget_s=30, ncu=ncu)
    assert profile.ok and "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active" in profile.missing_metrics


def test_a_kernel_that_faulted_under_the_profiler_is_no_measurement(tmp_path):
    """ncu still prints a row for a kernel that hit an illegal address (NaN metrics); the program then fails."""
    table = RAW_CSV.splitlines()
    start = next(i for i, line in enumerate(table) if line.startswith('"ID"'))
    header, units, first = table[start:start + 3]
    faulted = first.replace('"296.80"', '"nan"').replace('"1,073.74"', '"nan"')
    ncu = _fake_ncu(tmp_path, f"""
print('{{"ok": false, "error": "AcceleratorError: CUDA error: an illegal memory access was encountered"}}')
print({header!r}); print({units!r}); print({faulted!r})
print("==ERROR== The application returned an error code (9).")
sys.exit(9)""")
    profile = profile_command(["prog"], ncu=ncu, budget_s=30)
    assert not profile.ok and profile.kernels
    assert "kernel copy_strided did not complete" in profile.reason and "illegal memory access" in profile.reason


def test_a_program_that_fails_after_its_kernels_ran_gives_no_profile(tmp_path):
    ncu = _fake_ncu(tmp_path, f"print({RAW_CSV!r}); print('Traceback: boom'); sys.exit(3)")
    profile = profile_command(["prog"], ncu=ncu, budget_s=30)
    assert not profile.ok and profile.reason == "the profiled program failed under ncu (exit 3): Traceback: boom"
