"""On a CPU, configurations sized for a GPU are left out (and said to be), the timed one is small enough
for a naive loop, and a hidden size is still checked."""

from __future__ import annotations

from engine.problems import get_problem
from engine.verify.prepare import CPU_CHECK_MAX_FLOPS, cpu_notes, cpu_sized, timed_config


def test_gemm_on_a_cpu_leaves_out_the_gpu_sized_configuration_and_keeps_a_hidden_one():
    gemm = get_problem("gemm")
    kept, skipped = cpu_sized(gemm)
    assert [c.name for c in skipped] == ["large"]
    assert any(c.hidden for c in kept) and all((gemm.flops(c) or 0) <= CPU_CHECK_MAX_FLOPS for c in kept)
    assert timed_config(gemm, "cpu").name == "small"
    assert timed_config(gemm, "cuda").name == gemm.largest_config.name
    (note,) = cpu_notes(gemm, "cpu")
    assert "'large'" in note and "7.3 GFLOP" in note and cpu_notes(gemm, "cuda") == []


def test_every_shipped_c_problem_with_cpu_implementations_keeps_a_hidden_configuration_on_a_cpu():
    from engine.problems import scan_all

    for problem in scan_all().problems:
        if problem.kind == "c" and any(i.device == "cpu" for i in problem.implementations):
            kept, _ = cpu_sized(problem)
            assert any(c.hidden for c in kept), problem.slug
            assert timed_config(problem, "cpu") in kept, problem.slug
