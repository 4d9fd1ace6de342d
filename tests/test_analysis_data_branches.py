"""Branches on a value each lane loads from its own address (`if (bits[i] < 32)`): the divergence model
evaluates conditions on the thread index, and for these names the load, how many addresses a warp's lanes
read it from, and the arms' instructions; a warp vote (`__all_sync`) makes the condition uniform."""

from __future__ import annotations

from pathlib import Path

from tests.perf_cases_support import analysed, load_cases

CASES = {c.name: c for c in load_cases() if c.category == "branch-divergence"}


def _divergence(case: str, side: str):
    found = CASES[case]
    result = analysed(found.folder / f"{side}.cu", found.arch, found.sizes)
    return result, [f for f in result.findings if f.tool == "divergence"]


def test_two_algorithms_chosen_per_lane_from_loaded_sizes_name_the_load_and_the_warp_vote():
    result, findings = _divergence("fixnum-warp-vote", "slow")
    branch = next(b for b in result.static.kernels[0].branches if b.data_source)
    assert (branch.data_source, branch.data_groups, branch.has_else) == ("bits[i]", 32, True)
    assert "`bits[i]`, loaded from 32 different addresses" in findings[0].evidence
    assert f"{branch.then_cost} + {branch.else_cost} of the kernel's" in findings[0].evidence
    assert "__all_sync" in findings[0].suggestion


def test_a_vote_over_the_warp_is_one_value_for_its_lanes():
    result, findings = _divergence("fixnum-warp-vote", "fixed")
    assert not findings and not [b for b in result.static.kernels[0].branches if b.data_source]


def test_a_per_lane_skip_in_a_loop_says_the_skip_pays_only_when_the_whole_warp_skips():
    _, findings = _divergence("turboquant-sparse-v-skip", "slow")
    assert "per trip" in findings[0].evidence and "all 32 lanes of a warp skip together" in findings[0].evidence
    assert "unconditionally" in findings[0].suggestion


def test_a_small_arm_on_loaded_data_is_not_named():
    result = analysed(Path(__file__).parent / "data_branch_cases" / "relu.cu", "sm_90")
    assert result.ok and [b for b in result.static.kernels[0].branches if b.data_source]
    assert not [f for f in result.findings if f.tool == "divergence"]


def test_blocks_that_return_at_once_past_a_loaded_count_name_the_grid_and_the_grid_stride_fix():
    case = next(c for c in load_cases() if c.name == "mujoco-idle-blocks")
    slow = analysed(case.folder / "slow.cu", case.arch, case.sizes)
    exits = [b for b in slow.static.kernels[0].branches if b.block_exit]
    assert [(b.condition, b.data_source) for b in exits] == [("efc >= nefc[0]", "nefc[0]")]
    finding = next(f for f in slow.findings if f.title == "blocks that exit at once")
    assert finding.evidence.startswith("1048576 blocks") and "e += gridDim.x" in finding.suggestion
    assert not [f for f in slow.findings if f.tool == "divergence"]  # a whole block leaving splits no warp
    fixed = analysed(case.folder / "fixed.cu", case.arch, case.sizes)
    assert not [b for b in fixed.static.kernels[0].branches if b.block_exit]
