"""What host code tells the static analysis before anything runs: file-scope constants, the `<< <`
launch spelling, values passed from main to a launch helper, sizes a user pins, the names a launch
still needs, and the bytes cudaMemcpy moves. Pure source analysis: no compiler involved."""

from __future__ import annotations

from engine.analysis.source import cuda_ast
from engine.analysis.source.host import passed_values, transfers, unit_macros
from engine.analysis.source.launch import cuda_launch_sites, launch_for


def _unit(source: str, fixed: dict | None = None):
    root = cuda_ast.parse(source).root_node
    functions = cuda_ast.functions(root)
    kernels = {f.name: f for f in functions if f.is_kernel}
    host = [f for f in functions if not f.is_kernel and "__device__" not in f.qualifiers]
    return unit_macros(root, fixed), kernels, host


def _sites(source: str, fixed: dict | None = None):
    macros, kernels, host = _unit(source, fixed)
    return cuda_launch_sites(host, kernels, macros, {}, fixed)


KERNEL = "__global__ void k(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 0; }\n"


def test_file_scope_constants_read_like_defines():
    source = """const int A = 256;
static constexpr int B = A * 2;
constexpr unsigned C = 1u << 4;
const dim3 BLOCK(16, 16);
__constant__ int D = 3;
int mutable_global = 5;
const float* P = 0;
namespace cfg { constexpr int T = 32; }
enum { E1 = 64, E2 };
"""
    found = cuda_ast.constants(cuda_ast.parse(source).root_node)
    assert {name: m.body for name, m in found.items()} == {
        "A": "256", "B": "A * 2", "C": "1u << 4", "BLOCK": "dim3(16, 16)", "T": "32", "E1": "64", "E2": "(E1) + 1"}


def test_the_spaced_launch_spelling_is_a_launch():
    assert cuda_ast.has_launch("k<< <grid, block>> >(x, n);")
    assert cuda_ast.has_launch("k<<<1, 32>>>(x);")
    assert not cuda_ast.has_launch("int y = x << 2;")


def test_a_spaced_launch_with_dim3_variables_gives_block_and_grid():
    sites = _sites(KERNEL + """int main() {
    int n = 1000;
    dim3 block(16, 16);
    dim3 grid((n + 15) / 16, (n + 15) / 16);
    k<< <grid, block>> >(0, n);
}""")
    assert [(s.block, s.grid) for s in sites] == [((16, 16, 1), (63, 63, 1))]


def test_a_file_scope_constant_sets_the_block_of_a_launch():
    sites = _sites("const int THREADS = 128;\n" + KERNEL + "void run(float* x) { k<<<8, THREADS>>>(x, 1024); }")
    assert sites[0].block == (128, 1, 1)


def test_a_launch_helper_takes_the_sizes_main_passes_it():
    source = KERNEL + """void launch(float* x, int n) { k<<<(n + 255) / 256, 256>>>(x, n); }
void run(float* x, int m) { launch(x, m * 2); }
int main() { int m = 512; float* x; run(x, m); }"""
    macros, kernels, host = _unit(source)
    assert passed_values(host, macros, {}) == {"run": {"m": 512}, "launch": {"n": 1024}}
    site = cuda_launch_sites(host, kernels, macros, {})[0]
    assert (site.grid, site.scalar_args) == ((4, 1, 1), {1: 1024})


def test_a_size_read_at_run_time_is_named_where_the_launch_needs_it():
    source = KERNEL + "int main(int argc, char** argv) { int n = atoi(argv[1]); k<<<(n + 255) / 256, 256>>>(0, n); }"
    macros, kernels, host = _unit(source)
    sites = cuda_launch_sites(host, kernels, macros, {})
    assert sites[0].grid is None and sites[0].unknown == ("n",)
    assert launch_for(kernels["k"], sites, macros).unknown == ("n",)


def test_a_helpers_unbound_parameter_is_the_name_asked_for():
    sites = _sites(KERNEL + "void launch(float* x, int count) { int blocks = (count + 127) / 128; "
                            "k<<<blocks, 128>>>(x, count); }")
    assert sites[0].unknown == ("count",)


def test_a_pinned_size_overrides_a_runtime_read_and_a_define():
    source = "#define N 64\n" + KERNEL + \
        "int main(int argc, char** argv) { int n = atoi(argv[1]); k<<<(n + 255) / 256, 256>>>(0, n * N); }"
    site = _sites(source, {"n": 4096, "N": 2})[0]
    assert (site.grid, site.scalar_args, site.unknown) == ((16, 1, 1), {1: 8192}, ())


def test_cudamemcpy_sizes_give_the_bytes_each_way():
    source = """#define N 1024
int main() {
    size_t bytes = N * sizeof(float);
    float *a, *h;
    cudaMalloc(&a, bytes);
    cudaMemcpy(a, h, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(h, a, bytes / 2, cudaMemcpyDeviceToHost);
}"""
    macros, _, host = _unit(source)
    moved = transfers(host, macros, {})
    assert (moved.to_device, moved.to_host, moved.allocated, moved.min_bytes) == (4096, 2048, 4096, 6144)


def test_unknown_copy_sizes_name_what_they_need():
    macros, _, host = _unit("int main(int argc, char** argv) { int n = atoi(argv[1]); float* a; "
                            "cudaMalloc(&a, n * sizeof(float)); }")
    moved = transfers(host, macros, {})
    assert (moved.min_bytes, moved.unknown) == (None, ("n",))
