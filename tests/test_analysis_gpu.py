"""On the device: the occupancy model against the CUDA runtime's calculator, ncu's measured sectors
per request against the static estimates, NVML energy, and measured device ceilings."""

from __future__ import annotations

import re
import subprocess

import pytest

from engine.analysis import analyse_candidate, profile_command, theoretical_occupancy
from engine.toolchain import find_tool, tool_env
from tests.analysis_support import FIXTURES, cache_dir

pytestmark = pytest.mark.gpu

OCCUPANCY_PROBE = r"""
#include <cstdio>
#include "{fixture}"
int main() {{
    cudaFuncAttributes attr;
    cudaFuncGetAttributes(&attr, {kernel});
    int sizes[] = {{32, 64, 96, 128, 256, 384, 512, 768, 1024}};
    size_t dyn[] = {{0, 4096, 20000}};
    for (int s : sizes) for (size_t d : dyn) {{
        int blocks = -1;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, {kernel}, s, d);
        printf("%d %d %d %zu %d\n", attr.numRegs, (int)attr.sharedSizeBytes, s, d, blocks);
    }}
    return 0;
}}
"""


def _arch() -> str:
    import torch

    major, minor = torch.cuda.get_device_capability()
    return f"sm_{major}{minor}"


def _nvcc() -> str:
    nvcc = find_tool("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found")
    return str(nvcc)


def _build(tmp_path, name: str, source: str) -> str:
    src, exe = tmp_path / f"{name}.cu", tmp_path / name
    src.write_text(source)
    done = subprocess.run([_nvcc(), f"-arch={_arch()}", "-O3", "-o", str(exe), str(src)], capture_output=True,
                          text=True, env=tool_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    return str(exe)


@pytest.mark.parametrize(("fixture", "kernel"), [
    ("matmul_tiled.cu", "matmul_tiled"), ("smem_heavy.cu", "smem_heavy"), ("spilly.cu", "spilly"),
    ("reduce_shfl.cu", "reduce_shfl"), ("add_naive.cu", "add_naive"), ("mma_gemm.cu", "mma_gemm"),
])
def test_occupancy_model_matches_cuda_occupancy_max_active_blocks(tmp_path, fixture, kernel):
    exe = _build(tmp_path, kernel, OCCUPANCY_PROBE.format(fixture=FIXTURES / fixture, kernel=kernel))
    rows = [tuple(int(v) for v in line.split()) for line in subprocess.check_output([exe], text=True).splitlines()]
    arch = _arch()
    mismatches = [(threads, dyn, api, theoretical_occupancy(arch, regs, threads, smem, dyn).blocks_per_sm)
                  for regs, smem, threads, dyn, api in rows
                  if theoretical_occupancy(arch, regs, threads, smem, dyn).blocks_per_sm != api]
    assert not mismatches


def test_tiled_matmul_static_report_matches_the_runtime_at_its_launch_configuration(tmp_path):
    exe = _build(tmp_path, "matmul", OCCUPANCY_PROBE.format(fixture=FIXTURES / "matmul_tiled.cu",
                                                            kernel="matmul_tiled"))
    rows = [tuple(int(v) for v in line.split()) for line in subprocess.check_output([exe], text=True).splitlines()]
    regs, _, _, _, api_blocks = next(r for r in rows if r[2] == 1024 and r[3] == 0)
    report = analyse_candidate(None, (FIXTURES / "matmul_tiled.cu").read_text(), "cuda", arch=_arch(),
                               cache_dir=cache_dir())
    kernel = report.kernel("matmul_tiled")
    assert kernel.launch.threads == 1024
    assert kernel.resources.registers == regs
    assert kernel.occupancy[_arch()].blocks_per_sm == api_blocks


DRIVERS = {
    "add_naive.cu": ("add_naive", 1 << 22, "launch(a, b, c, n);"),
    "copy_strided.cu": ("copy_strided", 1 << 22, "launch(a, c, n);"),
    "transpose_naive.cu": ("transpose_naive", 2048, "launch(a, c, n);"),
}
DRIVER = r"""
#include "{fixture}"
int main() {{
    int n = {n};
    size_t count = (size_t)n * ({square} ? n : 1);
    float *a, *b, *c;
    cudaMalloc(&a, count * 4); cudaMalloc(&b, count * 4); cudaMalloc(&c, count * 4);
    cudaMemset(a, 0, count * 4); cudaMemset(b, 0, count * 4);
    {call}
    cudaDeviceSynchronize();
    return 0;
}}
"""


@pytest.mark.parametrize("fixture", list(DRIVERS))
def test_ncu_sectors_per_request_agree_with_the_static_estimate(tmp_path, fixture):
    if find_tool("ncu") is None:
        pytest.skip("ncu not found")
    kernel, n, call = DRIVERS[fixture]
    exe = _build(tmp_path, kernel, DRIVER.format(fixture=FIXTURES / fixture, n=n, call=call,
                                                 square=int(fixture.startswith("transpose"))))
    profile = profile_command([exe], budget_s=120)
    assert profile.ok, profile.reason
    measured = profile.summary()
    static = analyse_candidate(None, (FIXTURES / fixture).read_text(), "cuda", arch=_arch(), cache_dir=cache_dir())
    estimate = static.kernel(kernel)
    for kind, value in (("load", measured.ld_sectors_per_request), ("store", measured.st_sectors_per_request)):
        predicted = estimate.sectors_per_request(kind)
        assert value == pytest.approx(predicted, rel=0.25), (kind, value, predicted)
    assert profile.seconds < 60


def test_ncu_on_a_program_with_no_kernels_degrades_with_a_reason(tmp_path):
    if find_tool("ncu") is None:
        pytest.skip("ncu not found")
    profile = profile_command(["/bin/true"], budget_s=60)
    assert not profile.ok and profile.reason


def test_nvml_energy_per_call_over_a_two_second_loop():
    import torch

    from engine.analysis import measure_energy

    x = torch.randn(1 << 24, device="cuda")
    y = torch.empty_like(x)
    measurement = measure_energy(lambda: torch.add(x, 1.0, out=y), min_seconds=2.0)
    assert measurement.seconds >= 2.0 and measurement.calls > 100
    assert measurement.joules_per_call > 0
    assert 20 < measurement.average_watts < 2000


def test_device_ceilings_are_measured_and_stored(tmp_path):
    import torch

    from engine.analysis.profile import devices

    measured = devices.measure_ceilings(copy_bytes=1 << 28, matmul_size=4096, repeats=5)
    path = devices.store_measured(measured, tmp_path / "device_ceilings.json")
    assert devices.load_measured(path)[torch.cuda.get_device_name(0)].dram_bandwidth > 1e11
    table = devices.match_device(measured.device)
    if table is not None:
        assert 0.3 * table.dram_bandwidth < measured.dram_bandwidth < 1.2 * table.dram_bandwidth
        assert measured.matmul["bf16"] < 1.2 * table.peak("bf16")
    assert re.match(r"\d", measured.torch_version)
