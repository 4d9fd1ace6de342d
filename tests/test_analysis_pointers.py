"""The access model follows pointers: per-thread walks through a pointer loaded from memory or carried in
a struct argument, arrays of structs, and complex elements, with the bytes apart from the element type
and words that agree with the SASS counts printed beside them.

Each pair in tests/pointer_cases is a slow program (one thread per record, or lanes a struct apart) and
its fix (a warp per record, or neighbouring elements): the coalescing finding fires on the first and not
on the second."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis.source import cuda_ast
from engine.analysis.source.layouts import scalar_bytes, struct_layouts
from tests.perf_cases_support import analysed

CASES = Path(__file__).parent / "pointer_cases"


def _coalescing(name: str):
    result = analysed(CASES / name, "sm_90")
    assert result.ok, result.error
    return result, [f for f in result.findings if f.tool == "coalescing"]


@pytest.mark.parametrize("case, words", [
    ("rows", "from its own start address (from `rows[tid]`)"),
    ("offsets", "from its own start address (from `offsets[tid]`)"),
    ("job", "neighbouring threads read addresses"),
    ("complex", "80 bytes apart"),
])
def test_uncoalesced_on_the_slow_program_and_silent_on_its_fix(case, words):
    _, slow = _coalescing(f"{case}_slow.cu")
    _, fixed = _coalescing(f"{case}_fixed.cu")
    assert slow and words in slow[0].evidence, slow
    assert not fixed, fixed[0].evidence


def test_a_walk_per_thread_through_a_loaded_pointer_is_32_sectors_per_request_not_one():
    result, findings = _coalescing("rows_slow.cu")
    kernel = result.static.kernels[0]
    walk = next(a for a in kernel.accesses if a.expression == "*p++")
    assert (walk.sectors, walk.ideal_sectors, walk.own_pointers) == (32, 1, "rows[tid]")
    pointer_load = next(a for a in kernel.accesses if a.expression == "rows[tid]")
    assert pointer_load.elem_bytes == 8  # the array holds pointers, not chars
    assert "warp walk one row" in findings[0].suggestion


def test_the_words_name_the_width_the_sass_counts_show():
    result, findings = _coalescing("rows_slow.cu")
    mix = result.static.kernels[0].mix
    assert mix.global_load_widths == {8: 1, 1: 8}
    assert "each is an 8-bit load (SASS: LDG 9: 1×64-bit, 8×8-bit)" in findings[0].evidence
    assert not [f for f in result.findings if f.tool == "vectorization"]  # no float4 advice on a strided walk


def test_a_struct_argument_carries_its_pointer_and_its_sizes_are_assumed_and_said():
    result, _ = _coalescing("job_slow.cu")
    kernel = result.static.kernels[0]
    assert "job.record_bytes" in kernel.assumed_scalars
    walk = next(a for a in kernel.accesses if a.expression == "*p++")
    assert walk.array == "job.data" and walk.lane_stride_bytes == 4096


def test_complex_elements_are_two_of_their_component():
    assert scalar_bytes("thrust::complex<float>") == 8
    assert scalar_bytes("const cuda::std::complex<double>") == 16
    assert scalar_bytes("cuDoubleComplex") == 16 and scalar_bytes("complex<half>") == 4


def test_struct_layouts_follow_c_alignment():
    root = cuda_ast.parse("""
        struct A { char c; double d; };
        typedef struct { float x, y, z; int tag; } B;
        struct C { A a; short s[3]; const float* p; };
        struct D { float3 v; char k; };
        struct E { Unknown u; int i; };
    """).root_node
    layouts = struct_layouts(root)
    assert (layouts["A"].size, layouts["A"].members["d"].offset) == (16, 8)
    assert layouts["B"].size == 16 and layouts["B"].members["tag"].offset == 12
    assert layouts["C"].members["s"].offset == 16 and layouts["C"].members["p"].offset == 24
    assert layouts["C"].size == 32 and layouts["C"].members["p"].is_pointer
    assert layouts["D"].size == 16 and layouts["D"].align == 4
    assert "E" not in layouts  # a member of unknown size leaves the struct unsized


def test_an_array_of_structs_read_one_member_per_lane_is_a_struct_apart():
    from tests.perf_cases_support import load_cases

    case = next(c for c in load_cases() if c.name == "pyrit-aos-context")
    result = analysed(case.folder / "slow.cu", case.arch)
    accesses = {a.expression: a for a in result.static.kernels[0].accesses}
    member = accesses["out[idx].h3"]
    assert (member.elem_bytes, member.lane_stride_bytes, member.sectors, member.ideal_sectors) == (4, 20, 20, 4)
    # the whole struct copied at once is one contiguous span the warp uses entirely
    assert (accesses["in[idx]"].elem_bytes, accesses["in[idx]"].excess) == (20, 1.0)
    finding = next(f for f in result.findings if f.tool == "coalescing")
    assert "sha1_ctx structs of 20 bytes and each lane writes one 4-byte member" in finding.evidence
    assert "separate arrays" in finding.suggestion
