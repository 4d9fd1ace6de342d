"""The fast load_inline build: torch's sources and flags, torch's headers parsed once per flag set.

The cut itself is checked on text (fast); the builds (marked slow) run the verifier's prebuild program
on KernelBench-style candidates against one shared precompiled header built for the module; the GPU
test loads both builds and compares their outputs.
"""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest

from engine.compilation.inline import EXTENSIONS_INSIDE, load_inline_extras
from engine.toolchain import find_tool
from engine.untrusted.fastinline.extension import build_extension
from engine.untrusted.fastinline.ninja import parse_build_file
from engine.untrusted.fastinline.split import CannotSplit, split_cuda
from engine.untrusted.runner import prebuilt
from tests.load_inline_support import FIXTURES, link_stand_ins, load_as_runner, prebuild

PREFIX = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"  # what torch puts first
needs_nvcc = pytest.mark.skipif(find_tool("nvcc") is None, reason="needs nvcc (the nvidia-cuda-nvcc wheel)")


def cuda_of(name: str) -> str:
    """The CUDA source string of a fixture candidate, as torch writes it to cuda.cu."""
    tree = ast.parse((FIXTURES / name).read_text())
    text = next(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                and "__global__" in n.value)
    return PREFIX + text


# --- the cut --------------------------------------------------------------------------------------------

def test_kernels_go_to_the_device_unit_verbatim_and_torch_code_to_the_host_unit():
    source = cuda_of("elementwise_add.py")
    units = split_cuda(source, "/ext/add/cuda.cu")
    kernel = source[source.index("__global__"):source.index("torch::Tensor add_cuda")].strip()
    assert kernel in units.device and "torch" not in units.device.replace("torch/", "")
    assert "torch::Tensor add_cuda" in units.host and "__global__" not in units.host
    assert '#line 8 "/ext/add/cuda.cu"' in units.device  # diagnostics point at torch's own file


def test_a_launch_becomes_a_launcher_call_with_torchs_default_shared_memory_and_stream():
    units = split_cuda(cuda_of("elementwise_add.py"))
    assert "__rf_launch_add_kernel(num_blocks, block_size, 0, 0, a.data_ptr<float>()" in units.host
    assert "void __rf_launch_add_kernel(dim3 __rf_grid, dim3 __rf_block, size_t __rf_shmem, " \
           "cudaStream_t __rf_stream, const float* a, const float* b, float* out, int size);" in units.host
    assert "add_kernel<<<__rf_grid, __rf_block, __rf_shmem, __rf_stream>>>(a, b, out, size)" in units.device


def test_the_stream_and_shared_memory_of_a_launch_are_passed_through():
    units = split_cuda(cuda_of("scale_stream.py"))
    assert "__rf_launch_scale_shift_kernel(blocks, threads, threads * sizeof(float), stream, " in units.host
    assert "at::cuda::getCurrentCUDAStream()" in units.host and "C10_CUDA_KERNEL_LAUNCH_CHECK" in units.host


def test_a_templated_kernel_gets_a_templated_launcher_instantiated_for_what_the_host_calls():
    units = split_cuda(cuda_of("relu_dispatch.py"))
    assert units.templated
    assert "__rf_launch_leaky_relu_kernel<scalar_t>(blocks, threads, 0, 0, " in units.host
    device = units.with_instantiations(["void __rf_launch_leaky_relu_kernel<c10::Half>(dim3, dim3, unsigned long, "
                                        "CUstream_st*, c10::Half const*, c10::Half*, c10::Half, long)"])
    assert device.startswith("#include <c10/util/Half.h>")  # torch's Half, for a kernel instantiated on it
    assert "template void __rf_launch_leaky_relu_kernel<c10::Half>(dim3, dim3, unsigned long," in device


def test_namespaces_device_helpers_and_structs_reach_both_units_where_needed():
    units = split_cuda(cuda_of("layernorm_template.py"))
    assert "struct Params" in units.device and "struct Params" in units.host
    assert "__device__ float block_sum" in units.device and "block_sum" not in units.host
    assert "ln::__rf_launch_layernorm_kernel<512>(rows, 512, 0, 0, " in units.host


def test_constant_memory_written_from_host_code_is_reached_through_the_device_unit():
    source = PREFIX + """
__constant__ float weights[4];
__global__ void k(float* x) { x[threadIdx.x] *= weights[threadIdx.x]; }
torch::Tensor f(torch::Tensor x, torch::Tensor w) {
    cudaMemcpyToSymbol(weights, w.data_ptr<float>(), sizeof(weights));
    k<<<1, 4>>>(x.data_ptr<float>());
    return x;
}
"""
    units = split_cuda(source)
    assert "void* __rf_symbol_weights() { return (void*)&weights; }" in units.device
    assert "typedef float __rf_type_weights[4];" in units.host
    assert "static __rf_type_weights& weights = " in units.host


def test_a_kernel_used_other_than_by_a_launch_is_left_to_torchs_build():
    source = PREFIX + """
__global__ void k(float* x) {}
torch::Tensor f(torch::Tensor x) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
    k<<<1, 1, 65536>>>(x.data_ptr<float>());
    return x;
}
"""
    with pytest.raises(CannotSplit, match="other than by launching"):
        split_cuda(source)


def test_device_code_that_needs_torch_is_left_to_torchs_build():
    source = PREFIX + """
__global__ void k(torch::PackedTensorAccessor32<float, 2> x) {}
"""
    with pytest.raises(CannotSplit, match="uses torch"):
        split_cuda(source)


def test_torchs_build_file_is_read_for_its_flags_sources_and_library(tmp_path):
    text = (FIXTURES.parent / "load_inline_build.ninja").read_text()
    build = parse_build_file(text, tmp_path)
    assert build.library == tmp_path / "fixture_add.so" and build.cpp_source.name == "main.cpp"
    assert build.cuda_source.name == "cuda.cu" and "--expt-relaxed-constexpr" in build.cuda_cflags
    assert "'-fPIC'" not in build.cuda_cflags and "-fPIC" in build.cuda_cflags  # shell quoting undone
    assert "-DTORCH_EXTENSION_NAME=fixture_add" in build.cflags
    assert not any(f.startswith("-DTORCH_EXTENSION_NAME") for f in build.host_flags())
    assert "-lc10" in build.ldflags and build.cxx == ("c++",)


def test_the_extra_flags_of_literal_load_inline_calls_are_read_without_running_the_module():
    assert load_inline_extras((FIXTURES / "gelu_fast_math.py").read_text()) == [(("-O3",), ())]
    assert load_inline_extras("load_inline(name='x', cpp_sources='', extra_cflags=flags)") == []


def test_a_stamp_matches_the_same_inputs_in_another_folder_and_nothing_else(tmp_path):
    first, second = tmp_path / "a" / "ext", tmp_path / "b" / "ext"
    for folder in (first, second):
        folder.mkdir(parents=True)
        (folder / "build.ninja").write_text(f"build ext.so: link {folder}/main.o\n")
        (folder / "main.cpp").write_text("int f();\n")
        (folder / "ext.so").write_bytes(b"")
    prebuilt.write_stamp(first, "merged", 1.0)
    shutil.copy(first / prebuilt.STAMP, second / prebuilt.STAMP)
    assert prebuilt.stamp_matches(first) and prebuilt.stamp_matches(second)
    (second / "main.cpp").write_text("int g();\n")
    assert not prebuilt.stamp_matches(second)


def test_a_stamp_written_inside_a_sandbox_is_checked_from_outside_by_naming_the_path_it_was_written_at(tmp_path):
    inside, outside = "/refinery/ext/ext", tmp_path / "ext"
    outside.mkdir()
    (outside / "build.ninja").write_text(f"build ext.so: link {inside}/main.o\n")
    (outside / "ext.so").write_bytes(b"")
    stamp_from_inside = prebuilt.inputs_digest(outside, written_at=inside)
    (outside / prebuilt.STAMP).write_text(json.dumps({"inputs": stamp_from_inside, "route": "merged"}))
    assert not prebuilt.stamp_matches(outside)
    assert prebuilt.stamp_matches(outside, written_at=inside)


def test_a_build_file_the_fast_build_does_not_take_is_reported_not_raised(tmp_path):
    (tmp_path / "build.ninja").write_text("rule sycl_compile\n  command = icpx $in\n")
    result = build_extension(tmp_path)
    assert not result.ok and "sycl_compile" in result.reason and not result.authoritative


# --- real builds ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One shared header for the module (the default flags), and the link stand-ins."""
    from engine.compilation.shared_header import ensure_header

    root = tmp_path_factory.mktemp("pch")
    first = ensure_header(root)
    assert first.ok, first.log
    return root, first, link_stand_ins(tmp_path_factory.mktemp("stand-ins"))


@pytest.mark.slow
@pytest.mark.build
@needs_nvcc
def test_the_shared_header_is_built_once_then_found(shared):
    from engine.compilation.shared_header import ensure_header

    root, first, _ = shared
    again = ensure_header(root, extra_cflags=[""])  # torch drops empty flags: the same header
    assert first.built and not again.built and again.key == first.key and again.seconds < 1.0


@pytest.mark.slow
@pytest.mark.build
@needs_nvcc
def test_elementwise_add_is_built_fast_on_the_shared_header_and_loads_without_a_rebuild(shared, tmp_path):
    root, _, stand_ins = shared
    built = prebuild((FIXTURES / "elementwise_add.py").read_text(), tmp_path, stand_ins, root)
    assert built.returncode == 0 and "module raised" not in built.log, built.log[-3000:]
    assert [(r["path"], r["route"], r["shared_header"], r["ok"]) for r in built.records] == \
           [("fast", "merged", True, True)]
    loaded = load_as_runner(tmp_path, stand_ins)
    assert loaded == {"ninja_runs": 0, "extensions": {"add_ext": ["add_cuda"]}}


@pytest.mark.slow
@pytest.mark.build
@needs_nvcc
@pytest.mark.parametrize("fixture", ["relu_dispatch.py", "softmax_rows.py"])
def test_templated_and_multi_kernel_candidates_are_built_fast(shared, tmp_path, fixture):
    root, _, stand_ins = shared
    built = prebuild((FIXTURES / fixture).read_text(), tmp_path, stand_ins, root)
    assert built.returncode == 0 and [r["path"] for r in built.records] == ["fast"], built.log[-3000:]


def cuda_library_headers() -> bool:
    """torch's CUDA headers compile here: a CUDA build of torch and the CUDA libraries' headers (a CPU build
    of torch lacks c10/cuda's generated macros; ATen/cuda needs cuSPARSE's and cuBLAS's headers)."""
    from torch.utils.cpp_extension import include_paths

    from engine.untrusted.fastinline.torch_flags import ensure_cuda_home

    ensure_cuda_home()
    try:
        folders = [Path(p) for p in include_paths("cuda")]
    except OSError:
        return False
    return all(any((f / name).exists() for f in folders) for name in
               ("c10/cuda/impl/cuda_cmake_macros.h", "cusparse.h", "cublas_v2.h"))


@pytest.mark.slow
@pytest.mark.build
@needs_nvcc
@pytest.mark.skipif(not cuda_library_headers(), reason="torch's CUDA headers do not compile here (a CPU torch); "
                    "the cut of this candidate is checked above, its build on the GPU machine")
def test_a_launch_on_torchs_current_stream_is_built_fast(shared, tmp_path):
    root, _, stand_ins = shared
    built = prebuild((FIXTURES / "scale_stream.py").read_text(), tmp_path, stand_ins, root)
    assert built.returncode == 0 and [r["path"] for r in built.records] == ["fast"], built.log[-3000:]


@pytest.mark.slow
@pytest.mark.build
@needs_nvcc
def test_a_syntax_error_is_a_build_failure_with_the_compilers_message(shared, tmp_path):
    root, _, stand_ins = shared
    source = (FIXTURES / "elementwise_add.py").read_text().replace(
        'cpp_source = "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);"',
        'cpp_source = "torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b)"')
    built = prebuild(source, tmp_path, stand_ins, root)
    assert built.returncode == 3
    assert "main.cpp" in built.log and "error: expected" in built.log
    assert [(r["path"], r["ok"]) for r in built.records] == [("fast", False)]  # main.cpp alone: torch's verdict


OUTSIDE = '''
import torch
from torch.utils.cpp_extension import load_inline

cpp = """
#include <Python.h>
void scale(float* x, int n);
static PyModuleDef module = {PyModuleDef_HEAD_INIT, "outside_fast_path", nullptr, -1, nullptr};
PyMODINIT_FUNC PyInit_outside_fast_path(void) { return PyModule_Create(&module); }
"""
cuda = """
#include <cuda_runtime.h>
__global__ void scale_kernel(float* x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.f; }
void scale(float* x, int n) {
    cudaFuncSetAttribute(scale_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 0);
    scale_kernel<<<1, 256>>>(x, n);
}
"""
ext = load_inline(name="outside_fast_path", cpp_sources=cpp, cuda_sources=cuda, no_implicit_headers=True)
'''


@pytest.mark.slow
@pytest.mark.build
@needs_nvcc
def test_a_candidate_outside_the_fast_path_is_built_by_torchs_own_build(shared, tmp_path):
    root, _, stand_ins = shared
    built = prebuild(OUTSIDE, tmp_path, stand_ins, root)
    assert built.returncode == 0 and "module raised" not in built.log, built.log[-3000:]
    [record] = built.records
    assert record["path"] == "torch" and record["ok"] and "other than by launching" in record["reason"]
    assert (built.folder("outside_fast_path") / ".ninja_log").exists()  # ninja's own build, found again later


@pytest.mark.gpu
def test_the_verifiers_sandboxed_prebuild_builds_a_load_inline_candidate_fast(tmp_path):
    from engine.compilation import build_candidate
    from engine.problems import load_problem

    cheats = FIXTURES.parent.parent / "cheats"
    result = build_candidate(load_problem(cheats / "problems" / "pytorch" / "relu-small"),
                             (cheats / "gpu_inline_honest.py").read_text(), "python", arch="sm_90", cache_dir=tmp_path,
                             prebuild_inline=True)
    assert result.ok, result.log[-3000:]
    assert any("built by the fast build (merged, shared header)" in note for note in result.notes), result.notes
    # the build ran in the sandbox, which shows the folder at the path the runner shows it at too
    assert prebuilt.stamp_matches(result.extensions_dir / "relu_inline", written_at=f"{EXTENSIONS_INSIDE}/relu_inline")


@pytest.mark.gpu
def test_both_builds_give_identical_outputs_on_the_gpu(tmp_path):
    from tests.benchmark_scripts import load_benchmark

    bench = load_benchmark("load_inline_build")
    sources = bench.candidate_sources(3)
    for way in ("torch", "fast"):
        rows = bench.build_all(sources, way, tmp_path, "9.0", tmp_path / "pch", jobs=3)
        assert all(r.ok for r in rows), rows
    checks = [bench.check_one(name, tmp_path, "9.0") for name, _ in sources]
    assert all(c.same_outputs and c.same_functions and c.same_sass for c in checks), checks


def test_a_gpu_pool_builds_the_shared_headers_ahead_of_the_first_candidate(tmp_path, monkeypatch):
    from engine.compilation import shared_header
    from engine.verify.evaluate import warm_shared_headers

    asked: list = []
    monkeypatch.setattr(shared_header, "warm_headers", lambda root: asked.append(root) or [])
    warm_shared_headers(tmp_path / "pch").join(timeout=10)
    assert asked == [tmp_path / "pch"]
