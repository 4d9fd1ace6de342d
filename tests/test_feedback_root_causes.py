"""Root causes of real CUDA performance bugs that the static tools name: warp divergence, imbalanced
work per thread, short loops left rolled, bank conflicts sized from constants, and uncoalesced
accesses hidden in device helpers or stepped pointers. Each tool fires on a slow kernel, with the
number that proves it and its line, and stays silent on the kernel that fixes it; every finding
comes through the path a run takes (analyse_candidate, build_diagnostics, run_tools)."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from engine.analysis import analyse_candidate
from engine.analysis.profile.roofline import Bottleneck
from engine.feedback import Finding, all_tools, build_diagnostics, run_tools
from engine.problems import scan_all
from tests.analysis_support import cache_dir

FEEDBACK = Path(__file__).parent / "fixtures" / "feedback"


@functools.cache
def run_findings(name: str, fixed: tuple[tuple[str, int], ...] = ()) -> tuple[Finding, ...]:
    """The ranked findings a run would store for this fixture kernel (no problem, sizes default to 4096)."""
    static = analyse_candidate(None, (FEEDBACK / name).read_text(), "cuda", arch="sm_90", cache_dir=cache_dir(),
                               fixed=dict(fixed))
    return tuple(run_tools(build_diagnostics(static=static)))


def found(tool: str, name: str, **fixed: int) -> list[Finding]:
    return [f for f in run_findings(name, tuple(sorted(fixed.items()))) if f.tool == tool]


def line_of(name: str, marker: str) -> int:
    lines = (FEEDBACK / name).read_text().splitlines()
    return next(number for number, text in enumerate(lines, start=1) if marker in text)


def test_the_new_tools_are_registered_for_the_classes_they_serve():
    tools = all_tools()
    assert Bottleneck.COMPUTE in tools["divergence"].serves and Bottleneck.LATENCY in tools["divergence"].serves
    assert Bottleneck.MEMORY in tools["imbalanced-work"].serves
    assert Bottleneck.COMPUTE in tools["unrolling"].serves


# -- divergence ---------------------------------------------------------------------------------------

def test_divergence_fires_on_an_interleaved_reduction_with_the_idle_lanes_and_the_line():
    [finding] = found("divergence", "reduce_interleaved.cu")
    assert finding.line == line_of("reduce_interleaved.cu", "if (tid % (2 * stride) == 0)")
    assert finding.value == 0.5 and "half the lanes idle" in finding.evidence
    assert "all 8 warps" in finding.evidence and "of the loop's" in finding.evidence
    assert "tid < s" in finding.suggestion


def test_divergence_is_silent_on_sequential_addressing():
    assert not found("divergence", "reduce_sequential.cu")


def test_divergence_counts_both_arms_when_each_thread_picks_one():
    [finding] = found("divergence", "odd_even_paths.cu")
    assert finding.line == line_of("odd_even_paths.cu", "if (i % 2 == 0)")
    assert "16/16 between the arms" in finding.evidence and "runs both" in finding.evidence


def test_divergence_is_silent_when_each_warp_takes_one_path():
    assert not found("divergence", "warp_paths.cu")


def test_divergence_is_silent_on_a_bounds_check_at_the_tail():
    # n = 40 with one-warp blocks: block 1, the access model's block, is the tail, split 8/24 by `i < n`
    assert not found("divergence", "guarded_tail.cu", n=40)
    assert not found("divergence", "guarded_tail.cu")


# -- imbalanced work ------------------------------------------------------------------------------------

def test_imbalanced_work_fires_on_a_triangular_loop_with_the_waiting_share():
    [finding] = found("imbalanced-work", "triangle_rows.cu")
    assert finding.line == line_of("triangle_rows.cu", "for (int k = 0; k <= t; k++)")
    assert "1 to 256 trips" in finding.evidence and "50%" in finding.evidence
    assert finding.value == pytest.approx(0.5, abs=0.01)


def test_imbalanced_work_is_silent_when_warps_take_whole_rows():
    assert not found("imbalanced-work", "triangle_warp_rows.cu")


@functools.cache
def spmv_findings(implementation: str) -> tuple[Finding, ...]:
    """The shipped CSR SpMV problem, analysed and diagnosed as a run does at its largest configuration."""
    problem = next(p for p in scan_all().problems if p.slug == "spmv-csr")
    impl = next(i for i in problem.implementations if i.name == implementation)
    static = analyse_candidate(problem, impl.source, impl.language, arch="sm_90", cache_dir=cache_dir())
    return tuple(run_tools(build_diagnostics(static=static, problem=problem)))


def test_imbalanced_work_fires_on_scalar_csr_with_one_row_per_lane():
    [finding] = [f for f in spmv_findings("naive") if f.tool == "imbalanced-work"]
    assert finding.value == 32 and "row_ptr[r" in finding.evidence and finding.line == 11
    assert "warp" in finding.suggestion


@pytest.mark.parametrize("implementation", ["warp-shuffle", "coalesced"])
def test_imbalanced_work_is_silent_when_lanes_share_a_row(implementation):
    assert not [f for f in spmv_findings(implementation) if f.tool == "imbalanced-work"]


# -- unrolling -----------------------------------------------------------------------------------------

def test_unrolling_fires_on_a_tile_loop_kept_rolled_by_pragma_unroll_1():
    [finding] = found("unrolling", "tile_matmul_rolled.cu")
    assert finding.line == line_of("tile_matmul_rolled.cu", "for (int k = 0; k < TILE; k++)")
    assert finding.value == 16 and "backward branch" in finding.evidence and "#pragma unroll 1" in finding.evidence
    assert "#pragma unroll" in finding.suggestion


def test_unrolling_is_silent_on_the_unrolled_tile_loop():
    assert not found("unrolling", "tile_matmul_unrolled.cu")


def test_unrolling_reads_the_sass_for_a_template_loop_left_partly_rolled():
    [finding] = found("unrolling", "fir_partial.cu")
    assert finding.line == line_of("fir_partial.cu", "for (int t = 0; t < N; t++)")
    assert finding.value == 16 and "repeats" in finding.evidence and "8 times" in finding.evidence


def test_unrolling_is_silent_on_the_fully_unrolled_template_loop():
    assert not found("unrolling", "fir_unrolled.cu")


# -- bank conflicts with sizes from constants ---------------------------------------------------------

def test_bank_conflicts_size_the_tile_from_constants_and_suggest_the_padded_declaration():
    [finding] = found("bank-conflicts", "column_sums_conflict.cu")
    assert finding.value == 32 and finding.line == line_of("column_sums_conflict.cu", "acc += tile[threadIdx.x][c]")
    assert "declared [32][32]" in finding.evidence and "`tile[32][33]`" in finding.suggestion


def test_bank_conflicts_are_silent_on_the_padded_tile():
    assert not found("bank-conflicts", "column_sums_padded.cu")


# -- accesses through helpers and stepped pointers ---------------------------------------------------

def test_coalescing_follows_an_access_into_a_device_helper():
    [finding] = found("coalescing", "helper_matvec_rows.cu")
    assert finding.value == 32 and finding.line == line_of("helper_matvec_rows.cu", "acc += element(A, row, k, n)")
    assert "element(A, row, k, n)" in finding.evidence and "16 KiB apart" in finding.evidence


def test_coalescing_is_silent_on_the_helper_reading_the_transposed_matrix():
    assert not found("coalescing", "helper_matvec_columns.cu")


def test_coalescing_follows_a_pointer_stepped_along_the_row():
    [finding] = found("coalescing", "stepped_pointer_rows.cu")
    assert finding.value == 32 and "`*p++`" in finding.evidence
    assert finding.line == line_of("stepped_pointer_rows.cu", "acc += *p++")


def test_coalescing_is_silent_on_a_pointer_stepped_down_a_column():
    assert not found("coalescing", "stepped_pointer_columns.cu")
