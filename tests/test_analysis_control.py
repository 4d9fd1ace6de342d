"""The models the warp tools read: SASS source lines and loops, per-thread branch and trip-count
estimates over a block, compile-time trip counts, and the access model through helpers, stepped
pointers and sizes known from constants."""

from __future__ import annotations

from engine.analysis import analyse_candidate
from engine.analysis.binary.sass import parse_sass
from engine.analysis.source import cuda_ast
from engine.analysis.source.access import estimate_accesses
from engine.analysis.source.control import estimate_control
from engine.analysis.source.host import unit_macros
from tests.analysis_support import cache_dir

SASS_WITH_LINES = """\
//--------------------- .text.k --------------------------
k:
	//## File "/s/source.cu", line 3
        /*0000*/                   LDC R1, c[0x0][0x28] ;
.L_x_0:
	//## File "/s/source.cu", line 2 inlined at "/s/source.cu", line 8
	//## File "/s/source.cu", line 8
        /*0010*/                   LDG.E R4, desc[UR4][R4.64] ;
	//## File "/s/source.cu", line 7
        /*0020*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0030*/               @P0 BRA `(.L_x_0) ;
	//## File "/s/source.cu", line 9
        /*0040*/                   EXIT ;
$__internal_0_$__cuda_sm20_sqrt_rn_f32_slowpath:
        /*0050*/                   MUFU.RSQ R3, R0 ;
.L_x_1:
        /*0060*/                   BRA `(.L_x_1);
        /*0070*/                   NOP;
"""


def parsed(source: str, block=(256, 1, 1), scalars=None, estimate=estimate_control):
    root = cuda_ast.parse(source).root_node
    functions = cuda_ast.functions(root)
    kernel = next(f for f in functions if f.is_kernel)
    device = {f.name: f for f in functions if not f.is_kernel and "__device__" in f.qualifiers}
    return estimate(kernel, block, None, scalars or {}, unit_macros(root), device, 4,
                    tuple(cuda_ast.shared_declarations(root)))


# -- SASS lines ---------------------------------------------------------------------------------------

def test_sass_instructions_count_at_the_kernel_line_an_inlined_helper_was_called_from():
    mix = parse_sass(SASS_WITH_LINES)["k"]
    assert mix.line_instructions == {3: 1, 8: 1, 7: 2, 9: 1}  # the slow-path subroutine and NOPs have no line
    [loop] = mix.sass_loops
    assert loop.branch_line == 7 and loop.instructions == 3 and loop.lines == (7, 8)


# -- branches -----------------------------------------------------------------------------------------

def test_a_parity_condition_splits_every_warp_and_a_warp_index_condition_none():
    source = """__global__ void k(float *x) {
        if (threadIdx.x % 2) x[threadIdx.x] *= 2.0f;
        if ((threadIdx.x / 32) % 2) x[threadIdx.x] += 1.0f;
    }"""
    [branch], _ = parsed(source)
    assert (branch.line, branch.divergent_warps, branch.warps, branch.active_lanes) == (2, 8, 8, 16.0)


def test_a_triangular_guard_splits_only_blocks_on_the_diagonal_and_is_not_reported():
    source = """__global__ void k(float *c, int n) {
        int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
        if (col >= row) c[row * n + col] = 1.0f;
    }"""
    branches, _ = parsed(source, block=(16, 16, 1))
    assert not branches


# -- loops --------------------------------------------------------------------------------------------

def test_trip_counts_per_thread_follow_the_thread_index():
    _, [loop] = parsed("__global__ void k(float *x) { for (int j = 0; j < threadIdx.x; j++) x[j] += 1.0f; }")
    assert loop.trips == (0, 127.5, 255) and loop.imbalance == 0.5


def test_a_halving_loop_is_stepped_to_its_trip_count():
    _, [loop] = parsed("__global__ void k(float *x) { for (int s = blockDim.x / 2; s > 0; s >>= 1) x[s] = 0; }")
    assert loop.trips == (8, 8.0, 8)


def test_bounds_loaded_per_lane_count_one_work_item_per_lane():
    source = """__global__ void k(const int *ptr, const float *v, float *y) {
        int r = blockIdx.x * blockDim.x + threadIdx.x;
        int b = ptr[r], e = ptr[r + 1];
        float acc = 0.0f;
        for (int j = b; j < e; j++) acc += v[j];
        y[r] = acc;
    }"""
    _, [loop] = parsed(source)
    assert loop.data_groups == 32 and loop.data_source.startswith("ptr[r")


def test_bounds_loaded_once_per_warp_are_shared_by_its_lanes():
    source = """__global__ void k(const int *ptr, const float *v, float *y) {
        int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
        float acc = 0.0f;
        for (int j = ptr[w] + lane; j < ptr[w + 1]; j += 32) acc += v[j];
        y[w] = acc;
    }"""
    _, [loop] = parsed(source)
    assert loop.data_groups == 1


def test_trip_counts_from_defines_and_template_arguments_are_compile_time_and_sizes_are_not():
    source = """#define TILE 16
    template <int R = 4>
    __global__ void k(float *x, int n) {
        for (int a = 0; a < TILE; a++) x[a] = 0;
        for (int b = 0; b < R; b++) x[b] = 0;
        for (int c = 0; c < n; c++) x[c] = 0;
        const int half = TILE / 2;
        for (int d = 0; d < half; d++) x[d] = 0;
    }"""
    _, loops = parsed(source, scalars={"R": 4, "n": 16})
    assert [loop.constant_trips for loop in loops] == [16, 4, None, 8]


def test_an_unroll_pragma_before_a_loop_is_read():
    source = """__global__ void k(float *x) {
    #pragma unroll 1
        for (int a = 0; a < 8; a++) x[a] = 0;
        for (int b = 0; b < 8; b++) x[b] = 0;
    }"""
    _, loops = parsed(source)
    assert [loop.unroll_pragma for loop in loops] == ["1", None]


# -- the access model -----------------------------------------------------------------------------------

def test_an_access_inside_a_helper_is_estimated_with_the_callers_arguments_at_the_call_line():
    source = """__device__ float at(const float *m, int r, int c, int ld) { return m[r * ld + c]; }
    __global__ void k(const float *A, float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        y[i] = at(A, i, 0, n);
    }"""
    accesses, _ = parsed(source, scalars={"n": 1024}, estimate=estimate_accesses)
    helper = next(a for a in accesses if a.array == "A")
    assert helper.line == 4 and helper.sectors == 32 and helper.expression.startswith("at(A, i, 0, n) →")


def test_a_helper_returning_a_pointer_and_a_pointer_assigned_later_are_followed():
    source = """__device__ const float *row_of(const float *a, int r, int n) { return a + r * n; }
    __global__ void k(const float *A, float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        const float *p;
        p = A + i;
        y[i] = row_of(A, i, n)[0] + p[0];
    }"""
    accesses, _ = parsed(source, scalars={"n": 1024}, estimate=estimate_accesses)
    sectors = {a.expression: a.sectors for a in accesses if a.array == "A"}
    assert sectors == {"row_of(A, i, n)[0]": 32, "p[0]": 4}


def test_shared_tiles_sized_by_struct_constants_and_file_scope_tiles_are_estimated():
    source = """struct Cfg { static constexpr int TILE = 32; };
    __shared__ float outer[Cfg::TILE][Cfg::TILE];
    __global__ void k(float *y) {
        __shared__ float inner[Cfg::TILE][Cfg::TILE + 1];
        y[threadIdx.x] = outer[threadIdx.x][0] + inner[threadIdx.x][0];
    }"""
    accesses, _ = parsed(source, block=(32, 1, 1), estimate=estimate_accesses)
    ways = {a.array: (a.wavefronts, a.dims) for a in accesses if a.space == "shared"}
    assert ways == {"outer": (32, (32, 32)), "inner": (1, (32, 33))}


def test_template_arguments_named_by_a_define_size_the_shared_tile():
    source = """#define T 32
    template <int TILE>
    __global__ void k(const float *in, float *out) {
        __shared__ float tile[TILE][TILE];
        tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * TILE + threadIdx.x];
        __syncthreads();
        out[threadIdx.y * TILE + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
    }
    void launch(const float *in, float *out) { k<T><<<1, dim3(T, T)>>>(in, out); }
    """
    report = analyse_candidate(None, source, "cuda", arch="sm_90", cache_dir=cache_dir())
    [column] = [a for a in report.kernels[0].accesses if a.expression == "tile[threadIdx.x][threadIdx.y]"]
    assert column.wavefronts == 32


def test_a_tile_read_down_its_columns_is_told_the_padded_row_length():
    source = """__global__ void k(const float *in, float *out) {
        __shared__ float tile[32][32];
        tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * 32 + threadIdx.x];
        __syncthreads();
        out[threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
    }"""
    accesses, _ = parsed(source, block=(32, 8, 1), estimate=estimate_accesses)
    column = next(a for a in accesses if a.expression == "tile[threadIdx.x][threadIdx.y]")
    assert (column.wavefronts, column.padded_extent, column.padded_wavefronts) == (32, 33, 1)


def test_a_sixteen_wide_tile_padded_to_seventeen_is_told_to_drop_the_padding():
    # a warp spans two 16-float rows: with 17 a row, lane 16 lands in lane 0's bank
    source = """__global__ void k(const float *in, float *out) {
        __shared__ float Bs[16][17];
        Bs[threadIdx.y][threadIdx.x] = in[threadIdx.y * 16 + threadIdx.x];
        __syncthreads();
        out[threadIdx.y * 16 + threadIdx.x] = Bs[0][threadIdx.x];
    }"""
    accesses, _ = parsed(source, block=(16, 16, 1), estimate=estimate_accesses)
    store = next(a for a in accesses if a.expression == "Bs[threadIdx.y][threadIdx.x]")
    assert (store.wavefronts, store.padded_extent) == (2, 16)
