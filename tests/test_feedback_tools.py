"""Every feedback tool fires on a candidate that has its problem and stays quiet on one that does not;
the registry selects tools by bottleneck class, ranks findings and renders the feedback text."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis.profile import devices
from engine.analysis.profile.ncu import NcuSummary
from engine.analysis.profile.roofline import Bottleneck, Classification, roofline_point
from engine.feedback import all_tools, build_diagnostics, render_feedback, run_tools
from engine.problems import Problem
from engine.schema.verdict import ConfigResult, EvaluationResult, IntegrityFinding, Verdict
from tests.analysis_support import analyse_fixture

H200 = devices.match_device("H200")


def ncu_summary(**overrides) -> NcuSummary:
    values = dict(kernels=1, duration_s=1e-3, dram_bytes_read=1e9, dram_bytes_written=1e9, flops={},
                  achieved_occupancy=0.8, theoretical_occupancy=1.0, ld_sectors_per_request=4.0,
                  st_sectors_per_request=4.0, shared_ld_wavefronts_per_request=None,
                  shared_st_wavefronts_per_request=None, shared_bank_conflicts=0.0,
                  top_stalls=[("long_scoreboard", 2.0), ("not_selected", 1.5), ("wait", 1.0)], tensor_pipe_pct=None,
                  sm_throughput_pct=20.0, dram_throughput_pct=40.0, grid_blocks=4096, block_threads=256)
    values.update(overrides)
    return NcuSummary(**values)


def problem(dtype: str = "float32", tags: tuple[str, ...] = ()) -> Problem:
    return Problem(slug="fixture", kind="pytorch", title="fixture", folder=Path("."), reference_path=Path("x.py"),
                   dtype=dtype, tags=tags)


def findings(tool: str, fixture: str | None = None, **parts) -> list:
    static = analyse_fixture(fixture) if fixture else None
    diagnostics = build_diagnostics(static, device=H200, **parts)
    return run_tools(diagnostics, names=[tool], bottleneck=None)


def test_at_least_ten_tools_are_registered_each_serving_some_class():
    tools = all_tools()
    assert len(tools) >= 10
    assert {"coalescing", "occupancy", "register-spills", "bank-conflicts", "vectorization", "tensor-cores",
            "barrier-placement", "launch-configuration", "fusion", "correctness"} <= set(tools)
    assert all(t.serves for t in tools.values())


# -- one pair of tests per tool ---------------------------------------------------------------------

def test_coalescing_fires_on_strided_writes_with_the_stride_in_the_evidence():
    [finding] = findings("coalescing", "transpose_naive.cu")
    assert finding.value == 32 and "16 KiB apart" in finding.evidence and "threadIdx.x" in finding.suggestion


def test_coalescing_is_silent_on_contiguous_access():
    assert not findings("coalescing", "add_naive.cu")


def test_coalescing_uses_ncu_sectors_when_measured():
    [finding] = findings("coalescing", "copy_strided.cu", ncu=ncu_summary(ld_sectors_per_request=31.5))
    assert "31" in finding.evidence and "measured" in finding.evidence


def test_bank_conflicts_fire_on_the_unpadded_tile():
    [finding] = findings("bank-conflicts", "transpose_smem.cu")
    assert finding.value == 32 and "pad" in finding.suggestion


def test_bank_conflicts_are_silent_on_the_padded_tile():
    assert not findings("bank-conflicts", "transpose_padded.cu")


def test_vectorization_fires_on_coalesced_scalar_access_when_the_load_store_queue_throttles():
    throttled = ncu_summary(top_stalls=[("lg_throttle", 3.0), ("long_scoreboard", 1.0)])
    [finding] = findings("vectorization", "add_naive.cu", problem=problem(), ncu=throttled)
    assert "32-bit" in finding.evidence and "lg_throttle" in finding.evidence and "float4" in finding.suggestion
    assert "LDG 2: 2×32-bit" in finding.evidence


def test_vectorization_is_silent_on_scalar_access_alone():
    # narrow accesses are nearly every kernel: without a sign that they cost something there is nothing to say
    assert not findings("vectorization", "add_naive.cu", problem=problem())


def test_vectorization_is_silent_on_float4_and_on_strided_access():
    assert not findings("vectorization", "add_vec4.cu", problem=problem())
    assert not findings("vectorization", "copy_strided.cu", problem=problem())


def test_fusion_fires_when_two_kernels_pass_an_intermediate():
    [finding] = findings("fusion", "two_pass_cupy.py")
    assert "2 kernel launches" in finding.evidence


def test_fusion_is_silent_for_a_single_kernel():
    assert not findings("fusion", "relu_cupy.py")


def test_occupancy_names_shared_memory_as_the_limiter():
    [finding] = findings("occupancy", "smem_heavy.cu")
    assert finding.title == "occupancy limited by shared_mem" and "40 KiB" in finding.evidence


def test_occupancy_is_silent_at_full_occupancy():
    assert not findings("occupancy", "add_naive.cu")


def test_register_spills_fire_with_the_spilled_bytes():
    [finding] = findings("register-spills", "spilly.cu")
    assert "spill stores" in finding.evidence and finding.value > 1000


def test_register_spills_are_silent_without_spills():
    assert not findings("register-spills", "matmul_tiled.cu")


def test_launch_configuration_fires_on_a_grid_smaller_than_the_gpu():
    [finding] = findings("launch-configuration", "small_grid.cu")
    assert finding.value == 8 and "132 SMs" in finding.evidence


def test_launch_configuration_is_silent_on_a_full_grid():
    assert not findings("launch-configuration", "reduce_shfl.cu")


def test_barrier_placement_fires_on_a_divergent_barrier():
    [finding] = findings("barrier-placement", "divergent_sync.cu")
    assert finding.title == "barrier in a divergent branch" and finding.severity > 0.9


def test_barrier_placement_fires_on_barrier_dominated_stalls():
    [finding] = findings("barrier-placement", "matmul_tiled.cu",
                         ncu=ncu_summary(top_stalls=[("barrier", 6.0), ("long_scoreboard", 2.0)]))
    assert finding.title == "warps wait at barriers"


def test_barrier_placement_is_silent_on_uniform_barriers():
    assert not findings("barrier-placement", "matmul_tiled.cu")


def test_tensor_cores_fire_for_a_half_precision_matmul_on_ffma():
    [finding] = findings("tensor-cores", "matmul_tiled.cu", problem=problem("float16", ("matmul",)))
    assert "WMMA" in finding.suggestion


def test_tensor_cores_are_silent_when_mma_is_used_or_the_dtype_forbids_it():
    assert not findings("tensor-cores", "mma_gemm.cu", problem=problem("float16", ("matmul",)))
    assert not findings("tensor-cores", "matmul_tiled.cu", problem=problem("float32", ("matmul",)))


def test_atomics_fire_on_per_element_atomics_in_a_loop():
    [finding] = findings("atomics", "atomic_loop.cu")
    assert "__shfl_down_sync" in finding.suggestion


def test_atomics_are_silent_after_a_warp_reduction():
    assert not findings("atomics", "reduce_shfl.cu")


def test_warp_stalls_name_the_dominant_reason():
    [finding] = findings("warp-stalls", "add_naive.cu",
                         ncu=ncu_summary(top_stalls=[("long_scoreboard", 50.0), ("wait", 3.0)]))
    assert "long scoreboard" in finding.title and "global-memory loads" in finding.evidence


def test_warp_stalls_are_silent_without_a_dominant_reason_or_a_profile():
    assert not findings("warp-stalls", "add_naive.cu")
    assert not findings("warp-stalls", "add_naive.cu",
                        ncu=ncu_summary(top_stalls=[("long_scoreboard", 1.0), ("wait", 1.0), ("not_selected", 1.0)]))


def test_roofline_headroom_fires_near_the_bandwidth_roof():
    diagnostics = build_diagnostics(analyse_fixture("add_naive.cu"), device=H200)
    diagnostics.roofline = roofline_point(1e8, 1e9, 1e9 / 4.5e12, H200, "fp32")
    [finding] = run_tools(diagnostics, names=["roofline-headroom"], bottleneck=None)
    assert "94%" in finding.evidence


def test_roofline_headroom_is_silent_far_from_the_roof():
    diagnostics = build_diagnostics(analyse_fixture("add_naive.cu"), device=H200)
    diagnostics.roofline = roofline_point(1e8, 1e9, 1e9 / 1.0e12, H200, "fp32")
    assert not run_tools(diagnostics, names=["roofline-headroom"], bottleneck=None)


def _incorrect() -> EvaluationResult:
    return EvaluationResult(Verdict.INCORRECT, "wrong on 1 configuration", configs=[
        ConfigResult("small", False, True),
        ConfigResult("odd-shape", True, False, max_abs_error=1.2, max_rel_error=0.9,
                     first_mismatch="output 0 at [4998, 3000]: got 0, expected 0.71"),
    ])


def test_correctness_names_the_failing_configuration_and_the_first_mismatch():
    [finding] = findings("correctness", evaluation=_incorrect())
    assert "odd-shape (hidden)" in finding.evidence and "[4998, 3000]" in finding.evidence
    assert "bounds checks" in finding.suggestion


def test_correctness_reports_integrity_and_runtime_failures():
    integrity = EvaluationResult(Verdict.INTEGRITY_VIOLATION, "caught", integrity=[
        IntegrityFinding("result-caching", False, "same output for different inputs")])
    [finding] = findings("correctness", evaluation=integrity)
    assert "result-caching" in finding.evidence
    fault = EvaluationResult(Verdict.RUNTIME_ERROR, "CUDA error: an illegal memory access was encountered")
    [finding] = findings("correctness", evaluation=fault)
    assert "bound" in finding.suggestion


def test_correctness_is_silent_on_a_correct_candidate():
    assert not findings("correctness", evaluation=EvaluationResult(Verdict.CORRECT, "ok"))


# -- selection, ranking, rendering ------------------------------------------------------------------

def test_a_measured_class_selects_the_tools_that_serve_it():
    diagnostics = build_diagnostics(analyse_fixture("transpose_naive.cu"), device=H200)
    diagnostics.classification = Classification(Bottleneck.COMPUTE, "test", measured=True)
    assert {f.tool for f in run_tools(diagnostics)} <= {t.name for t in all_tools().values()
                                                       if Bottleneck.COMPUTE in t.serves}
    diagnostics.classification = Classification(Bottleneck.LAUNCH, "test", measured=True)
    assert "coalescing" not in {f.tool for f in run_tools(diagnostics)}


def test_a_static_estimate_of_the_class_runs_every_tool():
    diagnostics = build_diagnostics(analyse_fixture("transpose_naive.cu"), device=H200)
    assert not diagnostics.classification.measured
    assert "coalescing" in {f.tool for f in run_tools(diagnostics)}


def test_correctness_ranks_above_performance_findings():
    diagnostics = build_diagnostics(analyse_fixture("transpose_naive.cu"), evaluation=_incorrect(), device=H200)
    ranked = run_tools(diagnostics)
    assert ranked[0].tool == "correctness" and len(ranked) > 1


def test_feedback_text_is_a_short_ranked_list_with_number_and_change():
    diagnostics = build_diagnostics(analyse_fixture("spilly.cu"), device=H200)
    text = render_feedback(run_tools(diagnostics), diagnostics, limit=2)
    lines = text.splitlines()
    assert lines[0].startswith("Diagnosis") and lines[1].startswith("1. ") and "Change:" in text
    assert "32 sectors per request" in text
    assert len([line for line in lines if line[:2] in ("1.", "2.", "3.")]) == 2


def test_a_failed_profile_leaves_static_diagnostics_with_the_reason():
    from engine.analysis.profile.ncu import NcuProfile

    refused = NcuProfile(False, "performance counters refused (ERR_NVGPUCTRPERM)", [], 1.0, ["./prog"])
    diagnostics = build_diagnostics(analyse_fixture("transpose_naive.cu"), device=H200, profile=refused)
    assert diagnostics.ncu is None and any("ERR_NVGPUCTRPERM" in n for n in diagnostics.notes)
    assert "coalescing" in {f.tool for f in run_tools(diagnostics)}


def test_diagnostics_serialise_for_the_dashboard():
    import json

    diagnostics = build_diagnostics(analyse_fixture("spilly.cu"), ncu=ncu_summary(), device=H200)
    data = json.loads(json.dumps(diagnostics.to_json(run_tools(diagnostics))))
    assert data["bottleneck"] and data["findings"] and data["static"]["features"]["spill_bytes"] > 0


def test_feedback_text_says_when_nothing_was_found():
    assert "No problem found" in render_feedback([])


@pytest.mark.parametrize("fixture", ["add_vec4.cu", "mma_gemm.cu"])
def test_a_clean_kernel_gets_no_high_severity_findings(fixture):
    diagnostics = build_diagnostics(analyse_fixture(fixture), problem=problem(), device=H200)
    assert all(f.severity < 0.5 for f in run_tools(diagnostics))
