"""Static diagnostics: ptxas log, SASS mix, occupancy, source features, launch configuration,
coalescing and bank-conflict estimates, and the feature record — on the fixture kernels."""

from __future__ import annotations

import time

import pytest

from engine.analysis import FEATURES, analyse_candidate, theoretical_occupancy
from engine.analysis.binary.ptxas import demangle_kernel_name, parse_ptxas_log
from engine.analysis.binary.sass import access_width, parse_sass
from engine.problems.model import Config as ProblemConfig
from tests.analysis_support import analyse_fixture, cache_dir, fixture_source

PTXAS_LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z12matmul_tiledPKfS0_Pfi' for 'sm_90'
ptxas info    : Function properties for _Z12matmul_tiledPKfS0_Pfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 8192 bytes smem
ptxas info    : Compiling entry function 'spilly' for 'sm_90'
ptxas         . Function properties for spilly
    1688 bytes stack frame, 1684 bytes spill stores, 4356 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 1688 bytes cumulative stack size
"""

SASS_TEXT = """\
//--------------------- .text.loop_kernel --------------------------
loop_kernel:
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_1:
        /*0010*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0020*/                   HFMA2.MMA R6, -RZ, RZ, 0, 0 ;
        /*0030*/                   FFMA R8, R4, R5, R8 ;
        /*0040*/               @P0 BRA `(.L_x_1) ;
        /*0050*/                   STG.E [R2.64], R8 ;
        /*0060*/                   EXIT ;
.L_x_2:
        /*0070*/                   BRA `(.L_x_2);
"""


def test_ptxas_log_gives_registers_shared_memory_barriers_and_spills_per_kernel():
    found = parse_ptxas_log(PTXAS_LOG)
    matmul, spilly = found["_Z12matmul_tiledPKfS0_Pfi"], found["spilly"]
    assert (matmul.registers, matmul.smem_bytes, matmul.barriers, matmul.spill_bytes) == (32, 8192, 1, 0)
    assert (spilly.spill_stores, spilly.spill_loads, spilly.stack_bytes, spilly.cumulative_stack_bytes) == \
        (1684, 4356, 1688, 1688)


def test_mangled_kernel_symbols_demangle_to_their_source_names():
    assert demangle_kernel_name("_Z15transpose_tilediiPKfPf") == "transpose_tiled"
    assert demangle_kernel_name("_ZN2ns6kernelEPf") == "kernel"
    assert demangle_kernel_name("relu_kernel") == "relu_kernel"


def test_sass_mix_counts_loop_instructions_and_ignores_the_mma_pipe_move():
    mix = parse_sass(SASS_TEXT)["loop_kernel"]
    assert mix.count("global_load") == 1 and mix.global_load_widths == {16: 1}
    assert mix.in_loop == {"global_load": 1, "ffma": 1, "predicated_branch": 1}
    assert not mix.uses_tensor_cores  # HFMA2.MMA is a register move
    assert mix.loops == 1  # the trailing self-branch is not a loop


def test_access_width_reads_the_opcode_modifiers():
    assert [access_width(op) for op in ("LDG.E", "LDG.E.128.CONSTANT", "STG.E.64", "LDS.U8")] == [4, 16, 8, 1]


@pytest.mark.parametrize(("registers", "threads", "smem", "blocks", "limiter"), [
    (12, 256, 0, 8, "none"),  # add_naive on an H200: 8 blocks of 256 fill the 64 warp slots
    (32, 32, 0, 32, "blocks"),  # one-warp blocks: the 32-blocks cap leaves half the slots empty
    (32, 256, 40960, 5, "shared_mem"),  # 41 KiB per block: 5 blocks in 228 KiB
    (128, 256, 0, 2, "registers"),  # 128 registers x 256 threads: 2 blocks
    (32, 1024, 8192, 2, "none"),  # matmul_tiled
])
def test_occupancy_model_gives_blocks_per_sm_and_the_limiting_resource(registers, threads, smem, blocks, limiter):
    occupancy = theoretical_occupancy("sm_90", registers, threads, smem)
    assert occupancy.blocks_per_sm == blocks
    assert occupancy.limiter == limiter


def test_occupancy_depends_on_the_architecture():
    assert theoretical_occupancy("sm_90", 32, 1024).occupancy == 1.0
    assert theoretical_occupancy("sm_86", 32, 1024).occupancy == pytest.approx(2 / 3)  # 48 warp slots
    assert theoretical_occupancy("sm_80", 32, 256, 40960).blocks_per_sm == 4  # 164 KiB carveout


def test_occupancy_is_zero_when_the_block_cannot_launch():
    assert theoretical_occupancy("sm_90", 32, 2048).blocks_per_sm == 0
    assert theoretical_occupancy("sm_90", 32, 256, smem_static=40000, smem_dynamic=20000).blocks_per_sm == 0


def test_contiguous_accesses_need_four_sectors_per_request():
    report = analyse_fixture("add_naive.cu")
    assert report.ok
    assert report.features["coalescing_sectors_per_request"] == 4.0
    assert report.features["coalescing_efficiency"] == 1.0


def test_float4_accesses_need_sixteen_sectors_and_show_as_128_bit_in_sass():
    report = analyse_fixture("add_vec4.cu")
    assert report.features["global_load_sectors_per_request"] == 16.0
    assert report.features["vector_width"] == 16
    assert report.features["coalescing_efficiency"] == 1.0


def test_strided_reads_touch_one_sector_per_lane():
    report = analyse_fixture("copy_strided.cu")
    kernel = report.kernel("copy_strided")
    assert kernel.sectors_per_request("load") == 32.0
    assert kernel.sectors_per_request("store") == 4.0


def test_naive_transpose_writes_are_uncoalesced_and_its_reads_are_not():
    kernel = analyse_fixture("transpose_naive.cu").kernel("transpose_naive")
    assert kernel.sectors_per_request("load") == 4.0
    assert kernel.sectors_per_request("store") == 32.0
    assert kernel.worst_access().lane_stride_bytes == 4096 * 4


def test_unpadded_shared_tile_read_down_a_column_is_a_32_way_conflict_and_padding_removes_it():
    conflict = analyse_fixture("transpose_smem.cu")
    padded = analyse_fixture("transpose_padded.cu")
    assert conflict.features["smem_bank_conflict_ways"] == 32.0
    assert padded.features["smem_bank_conflict_ways"] == 1.0
    assert padded.features["smem_padded"] == 1.0 and conflict.features["smem_padded"] == 0.0


def test_block_shape_comes_from_dim3_at_the_launch_site():
    kernel = analyse_fixture("matmul_tiled.cu").kernel("matmul_tiled")
    assert kernel.launch.block == (32, 32, 1)
    assert kernel.launch.origin == "launch-site"


def test_block_size_comes_from_a_cupy_launch_and_a_module_constant():
    report = analyse_fixture("relu_cupy.py")
    kernel = report.kernel("relu_kernel")
    assert kernel.launch.block == (128, 1, 1) and kernel.launch.origin == "cupy-launch"
    assert report.features["launch_known"] == 1.0


def test_launch_bounds_give_the_block_size_when_no_launch_is_visible():
    source = fixture_source("spilly.cu").split('extern "C"')[0]
    report = analyse_candidate(None, source, "cuda", arch="sm_90", cache_dir=cache_dir())
    assert report.kernel("spilly").launch.block == (1024, 1, 1)
    assert report.kernel("spilly").launch.origin == "launch-bounds"


def test_an_unknown_block_size_is_assumed_and_the_record_says_so():
    source = fixture_source("add_naive.cu").split('extern "C"')[0]
    report = analyse_candidate(None, source, "cuda", arch="sm_90", cache_dir=cache_dir())
    assert report.kernel("add_naive").launch.origin == "assumed"
    assert report.features["launch_known"] == 0.0
    assert any("assumed" in note for note in report.notes)


def test_the_grid_is_evaluated_from_literal_launches():
    assert analyse_fixture("small_grid.cu").features["grid_blocks"] == 8.0
    assert analyse_fixture("reduce_shfl.cu").kernel("reduce_shfl").launch.grid == (264, 1, 1)


def test_spills_and_local_memory_are_reported():
    report = analyse_fixture("spilly.cu")
    assert report.features["spill_bytes"] > 1000
    assert report.features["local_memory_ops"] > 0


def test_tensor_core_use_is_read_from_the_sass():
    assert analyse_fixture("mma_gemm.cu").features["uses_tensor_cores"] == 1.0
    assert analyse_fixture("matmul_tiled.cu").features["uses_tensor_cores"] == 0.0


def test_source_features_name_barriers_in_loops_and_in_divergent_branches():
    tiled = analyse_fixture("matmul_tiled.cu").features
    divergent = analyse_fixture("divergent_sync.cu").features
    assert tiled["sync_in_loop"] == 2 and tiled["sync_in_divergent_branch"] == 0
    assert divergent["sync_in_divergent_branch"] == 1


def test_source_features_name_warp_shuffles_atomics_and_grid_stride_loops():
    reduce = analyse_fixture("reduce_shfl.cu").features
    atomic = analyse_fixture("atomic_loop.cu").features
    assert reduce["warp_intrinsics"] == 2 and reduce["grid_stride_loop"] == 1 and reduce["atomics_in_loop"] == 0
    assert atomic["atomics_in_loop"] == 1
    assert analyse_fixture("matmul_tiled.cu").features["unroll_pragmas"] == 1


def test_two_kernels_launched_per_forward_are_counted():
    report = analyse_fixture("two_pass_cupy.py")
    assert report.features["launches_per_call"] == 2 and report.features["kernels"] == 2


def test_occupancy_is_reported_for_several_architectures_naming_the_limiter():
    kernel = analyse_fixture("smem_heavy.cu").kernel("smem_heavy")
    assert set(kernel.occupancy) >= {"sm_80", "sm_86", "sm_89", "sm_90"}
    assert kernel.occupancy["sm_90"].blocks_per_sm == 5 and kernel.occupancy["sm_80"].blocks_per_sm == 4
    assert all(o.limiter == "shared_mem" for o in kernel.occupancy.values())
    assert analyse_fixture("smem_heavy.cu").features["occupancy_limited_by_smem"] == 1.0


def test_every_report_carries_every_feature_key_as_a_number():
    for name in ("add_naive.cu", "relu_cupy.py", "mma_gemm.cu"):
        features = analyse_fixture(name).features
        assert list(features) == list(FEATURES)
        assert all(isinstance(v, int | float) for v in features.values())


def test_a_compile_error_is_reported_with_the_compiler_message():
    report = analyse_candidate(None, "__global__ void k(float* x) { x[0] = undefined_name; }", "cuda",
                               arch="sm_90", cache_dir=cache_dir())
    assert not report.ok
    assert any("undefined_name" in note for note in report.notes)
    assert report.kernels and report.kernels[0].resources is None  # source facts survive the failed build


def test_a_cpu_candidate_has_no_gpu_diagnostics_but_a_full_feature_record():
    report = analyse_candidate(None, "void f(void) {}", "c", arch="sm_90", cache_dir=cache_dir())
    assert report.ok and not report.kernels and list(report.features) == list(FEATURES)


def test_report_serialises_to_json_friendly_data():
    import json

    json.dumps(analyse_fixture("matmul_tiled.cu").to_json())


def test_static_analysis_of_a_cached_build_takes_well_under_two_seconds():
    analyse_fixture("matmul_tiled.cu")  # the build and its SASS are cached now
    started = time.perf_counter()
    analyse_candidate(None, fixture_source("matmul_tiled.cu"), "cuda", arch="sm_90", cache_dir=cache_dir())
    assert time.perf_counter() - started < 2.0


def test_unusual_constructs_analyse_with_data_dependent_indices_reported_as_unknown():
    report = analyse_fixture("odd_constructs.cu")
    assert report.ok and not [n for n in report.notes if "skipped" in n]
    kernel = report.kernel("templ")
    assert kernel.launch.block == (256, 1, 1)
    unknown = [a for a in kernel.accesses if not a.known]
    assert any("loaded from memory" in a.reason for a in unknown)
    assert kernel.resources.smem_bytes == 1024  # buf[BS] with BS = 256 from the template argument


STRIDED_COPY_MODULE = '''
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void strided_copy(const float* x, float* y, int n, int s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i * s];
}
"""
_kernel = cp.RawKernel(CUDA_SOURCE, "strided_copy")


class ModelNew(torch.nn.Module):
    def __init__(self, stride: int, scale: float):
        super().__init__()
        self.s, self.scale = stride, scale

    def forward(self, x):
        n = x.numel() // self.s
        y = torch.empty(n, device=x.device)
        s, scale = self.s, self.scale
        _kernel(((n + 255) // 256,), (256,), (x.data_ptr(), y.data_ptr(), cp.int32(n), cp.int32(s)))
        return y * scale
'''


@pytest.mark.parametrize(("stride", "sectors"), [(1, 4.0), (2, 8.0), (8, 32.0)])
def test_a_kernel_argument_set_in_init_from_the_configuration_is_known_to_the_estimate(stride, sectors):
    """KernelBench passes the configuration's constants to ModelNew(...) under the same names."""
    config = ProblemConfig(name="c", params={"stride": stride, "scale": 2.0, "n": 1 << 20})
    report = analyse_candidate(None, STRIDED_COPY_MODULE, "python", config, arch="sm_90", cache_dir=cache_dir())
    kernel = report.kernel("strided_copy")
    assert kernel.sectors_per_request("load") == sectors
    assert kernel.sectors_per_request("store") == 4.0
    assert "s" not in kernel.assumed_scalars


def test_without_the_configuration_the_init_argument_is_assumed_and_said_so():
    report = analyse_candidate(None, STRIDED_COPY_MODULE, "python", arch="sm_90", cache_dir=cache_dir())
    kernel = report.kernel("strided_copy")
    assert kernel.sectors_per_request("load") == 32.0 and "s" in kernel.assumed_scalars
    assert "strided_copy: n, s taken as 4096 for address estimates" in report.notes


def test_get_inputs_shapes_are_read_from_the_reference_without_running_it():
    from engine.analysis.source.launch import TensorShape, reference_inputs
    from engine.problems import get_problem

    softmax = get_problem("softmax")
    odd = softmax.config("odd-shape")
    assert reference_inputs(softmax.reference_source, dict(odd.params)) == [TensorShape((999, 5003), 4)]
    fp16 = get_problem("matmul-fp16")
    shapes = reference_inputs(fp16.reference_source, dict(fp16.largest_config.params))
    assert shapes and all(isinstance(s, TensorShape) and s.elem_bytes == 2 for s in shapes)
    assert reference_inputs("def get_inputs():\n    return [load_from_disk()]\n", {}) is None


FLAGGED_MODULE = '''
import cupy as cp
import torch

CUDA_SOURCE = r"""
extern "C" __global__ void rows_copy(const float* __restrict__ x, float* __restrict__ y, int cols, int vec) {
    const float* p = x + (long long)blockIdx.x * cols;
    float* q = y + (long long)blockIdx.x * cols;
    if (vec) {
        for (int c = threadIdx.x; c < (cols >> 2); c += blockDim.x)
            reinterpret_cast<float4*>(q)[c] = reinterpret_cast<const float4*>(p)[c];
    } else {
        for (int c = threadIdx.x; c < cols; c += blockDim.x) q[c] = p[c];
    }
}
"""
_kernel = cp.RawKernel(CUDA_SOURCE, "rows_copy")


class ModelNew(torch.nn.Module):
    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        vec = int(x.data_ptr() % 16 == 0 and y.data_ptr() % 16 == 0 and cols % 4 == 0)
        _kernel((rows,), (256,), (x.data_ptr(), y.data_ptr(), cp.int32(cols), cp.int32(vec)))
        return y
'''


class _RowsProblem:
    """The parts of a problem the static analysis reads: its kind, reference and size model."""

    kind = "pytorch"
    reference_source = "import torch\nB, N = 8, 64\ndef get_inputs():\n    return [torch.randn(B, N)]\n"
    dtype = "float32"
    configs: list = []

    def flops(self, _config):
        return None

    def min_bytes(self, _config):
        return None


@pytest.mark.parametrize(("cols", "vec", "sectors"), [(4096, 1, 16.0), (4099, 0, 5.0)])
def test_a_path_flag_the_launch_computes_from_the_input_shape_picks_the_arm_modelled(cols, vec, sectors):
    """`if (vec)` from alignment and row length: the static estimate follows the arm the launch takes
    (both arms were averaged before: 10 sectors, where ncu saw 4.9 or 16)."""
    from engine.analysis.source.launch import python_launch_sites, reference_inputs

    params = {"B": 64, "N": cols}
    (site,) = python_launch_sites(FLAGGED_MODULE, {"rows_copy"}, params,
                                  reference_inputs(_RowsProblem.reference_source, params))
    assert site.grid == (64, 1, 1) and (site.scalar_args[2], site.scalar_args[3]) == (cols, vec)
    config = ProblemConfig(name="c", params=params)
    report = analyse_candidate(_RowsProblem(), FLAGGED_MODULE, "python", config, arch="sm_90", cache_dir=cache_dir())
    kernel = report.kernel("rows_copy")
    assert kernel.sectors_per_request("load") == pytest.approx(sectors, abs=0.01)
    assert kernel.assumed_scalars == []


def test_a_flag_the_analysis_only_assumes_keeps_both_arms():
    report = analyse_candidate(None, FLAGGED_MODULE, "python", arch="sm_90", cache_dir=cache_dir())
    kernel = report.kernel("rows_copy")
    assert set(kernel.assumed_scalars) == {"cols", "vec"}
    assert kernel.sectors_per_request("load") == pytest.approx(10.0)  # 16 and 4, averaged


@pytest.mark.parametrize(("config", "sectors"), [("medium", 16.0), ("odd-shape", 4.0)])
def test_a_path_flag_c_host_code_computes_from_alignment_and_size_picks_the_arm_modelled(config, sectors):
    """gesummv/vectorized: `vec = (n % 4 == 0) && (((uintptr_t)A | ...) % 16 == 0)` in the host function;
    the harness's buffers are fresh allocations, so the flag follows n (1300: float4 rows; 4999: scalar)."""
    from engine.problems import get_problem

    problem = get_problem("gesummv")
    impl = problem.implementation("vectorized")
    report = analyse_candidate(problem, impl.source, impl.language, problem.config(config), arch="sm_90",
                               cache_dir=cache_dir())
    assert report.kernel("gesummv_vec").sectors_per_request("load") == pytest.approx(sectors)
