"""Build: every candidate flavour compiles on a machine with no GPU, keeps cubins and ptxas logs, and is
cached by content so nothing is compiled twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.compilation import BuildRequest, build_candidate, build_many, language_of
from engine.compilation.extract import kernel_names
from engine.compilation.inline import device_only_source, extensions_dir, torch_arch_list
from engine.problems import get_problem, load_problem
from engine.toolchain import find_tool

CHEATS = Path(__file__).parent / "cheats"
RELU_SMALL = CHEATS / "problems" / "pytorch" / "relu-small"
SCALE_SMALL = CHEATS / "problems" / "c" / "scale-small"

needs_nvcc = pytest.mark.skipif(find_tool("nvcc") is None, reason="nvcc not installed")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("build-cache")


@pytest.fixture(scope="module")
def relu():
    return load_problem(RELU_SMALL)


@pytest.fixture(scope="module")
def scale():
    return load_problem(SCALE_SMALL)


def build(problem, source, language, cache, **options):
    return build_candidate(problem, source, language, arch="sm_90", cache_dir=cache, **options)


@needs_nvcc
def test_cupy_candidate_yields_one_cubin_with_ptxas_log_per_cuda_source(relu, cache):
    result = build(relu, (CHEATS / "gpu_honest.py").read_text(), "python", cache)
    assert result.ok and result.flavor == "cupy" and result.needs_gpu
    assert len(result.cubins) == 1 and result.cubins[0].output.suffix == ".cubin"
    assert "Used" in result.ptxas_logs[0] and "registers" in result.ptxas_logs[0]
    assert result.kernel_names == ("relu_honest",)


@needs_nvcc
def test_a_second_build_of_the_same_source_is_a_cache_hit(relu, cache):
    source = (CHEATS / "gpu_decoy_kernel.py").read_text()
    first = build(relu, source, "python", cache)
    second = build(relu, source, "python", cache)
    assert first.ok and second.ok and second.cached
    assert second.cubins[0].key == first.cubins[0].key


@needs_nvcc
def test_cuda_compile_errors_report_the_first_error_line(relu, cache):
    broken = (CHEATS / "gpu_honest.py").read_text().replace("float v = x[i];", "float v = x[i]")
    result = build(relu, broken, "python", cache)
    assert not result.ok and "error" in result.error.lower()


def test_pure_pytorch_candidate_needs_no_compile_and_runs_on_a_cpu(relu, cache):
    result = build(relu, (CHEATS / "honest.py").read_text(), "python", cache)
    assert result.ok and result.flavor == "torch" and not result.needs_gpu and not result.cubins


def test_c_problem_cpu_candidate_builds_candidate_and_reference_with_cc(scale, cache):
    result = build(scale, scale.implementation("cpu-naive").source, "c", cache)
    assert result.ok and result.flavor == "c-library" and not result.needs_gpu
    assert result.library.suffix == ".so" and result.reference_library.exists()


def test_c_compile_error_is_a_result_not_an_exception(scale, cache):
    result = build(scale, (CHEATS / "c_compile_error.c").read_text(), "c", cache)
    assert not result.ok and "undefined_name" in result.error


@needs_nvcc
def test_c_problem_cuda_candidate_yields_a_shared_library_and_a_cubin(scale, cache):
    result = build(scale, scale.implementation("naive").source, "cuda", cache, with_baseline=True)
    assert result.ok and result.flavor == "cuda-library" and result.needs_gpu
    assert result.library.exists() and result.cubins[0].output.exists()
    assert result.baseline_library is not None and result.kernel_names == ("scale_naive",)


def test_wrong_language_for_the_problem_kind_is_refused_with_a_reason(relu, scale, cache):
    assert "ModelNew" in build(relu, "x", "cuda", cache).error
    assert "kernel_scale" in build(scale, "x", "python", cache).error


@needs_nvcc
def test_load_inline_candidates_are_analysed_from_their_device_code_in_seconds(relu, cache):
    source = (CHEATS / "gpu_inline_honest.py").read_text()
    result = build(relu, source, "python", cache)
    assert result.ok and result.flavor == "load_inline"
    assert result.kernel_names == ("relu_inline_kernel",)
    assert "torch::" not in result.sources[0] and "__global__" in result.sources[0]
    assert result.extensions_dir == extensions_dir(cache, source, "sm_90")


def test_device_only_source_drops_torch_host_code_and_keeps_kernels_verbatim():
    source = (CHEATS / "gpu_inline_honest.py").read_text().split('r"""')[1].split('"""')[0]
    device = device_only_source(source)
    kernel = source[source.index("__global__"):source.index("torch::Tensor relu_inline")]
    assert kernel.strip() in device and "#include <torch" not in device and "relu_inline(torch" not in device


def test_extensions_dir_is_keyed_by_source_content(tmp_path):
    a, b = extensions_dir(tmp_path, "a", "sm_90"), extensions_dir(tmp_path, "b", "sm_90")
    assert a != b and a == extensions_dir(tmp_path, "a", "sm_90") and a.parent.name == "torch_extensions"
    assert torch_arch_list("sm_90") == "9.0" and torch_arch_list("sm_90a") == "9.0a"


def test_kernel_names_finds_extern_c_templated_and_launch_bounded_kernels():
    source = """
    extern "C" __global__ void a(float* x) {}
    template <int N> __global__ void b(float* x) {}
    __global__ __launch_bounds__(256) void c(float* x) {}
    __device__ float helper(float x) { return x; }
    """
    assert kernel_names(source) == ("a", "b", "c")


def test_build_many_returns_results_in_request_order_and_reports_each(scale, cache):
    sources = [scale.implementation("cpu-naive").source, (CHEATS / "c_compile_error.c").read_text(),
               (CHEATS / "c_partial.c").read_text()]
    seen = []
    results = build_many([BuildRequest(scale, s, "c") for s in sources], jobs=2, arch="sm_90", cache_dir=cache,
                         on_done=lambda i, b: seen.append(i))
    assert [r.ok for r in results] == [True, False, True] and sorted(seen) == [0, 1, 2]


def test_language_is_read_from_the_file_suffix():
    assert [language_of(n) for n in ("a.py", "b.cu", "c.c")] == ["python", "cuda", "c"]
    with pytest.raises(ValueError):
        language_of("d.txt")


@needs_nvcc
@pytest.mark.slow
def test_every_shipped_cuda_implementation_compiles_for_analysis(cache):
    for problem in [get_problem(p) for p in ("relu", "transpose")]:
        for impl in problem.implementations:
            if impl.device == "cuda":
                result = build(problem, impl.source, impl.language, cache, with_baseline=False)
                assert result.ok, f"{problem.slug}/{impl.name}: {result.error}"
                assert result.cubins and all(c.log for c in result.cubins)
