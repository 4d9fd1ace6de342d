"""`refinery analyze FILE.cu`: a run's static report and feedback for any CUDA file, with the launch
read from host code, sizes given or read from the file, and errors said in words."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.cli import app
from engine.feedback.standalone import FileAnalysis, analyse_file, parse_sizes
from tests.analysis_support import cache_dir

FIXTURES = Path(__file__).parent / "fixtures" / "analyze"


@functools.cache
def analysed(name: str, sizes: tuple[tuple[str, int], ...] = (), flops: str | None = None,
             nbytes: str | None = None) -> FileAnalysis:
    path = FIXTURES / name
    return analyse_file(path.read_bytes(), path.name, arch="sm_90", sizes=dict(sizes), flops=flops, nbytes=nbytes,
                        cache_dir=cache_dir())


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """`refinery …` with one data folder for the module, so each fixture file compiles once."""
    from engine.settings import get_settings

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REFINERY_HOME", str(tmp_path_factory.mktemp("analyze-home")))
        patch.delenv("REFINERY_DATABASE_URL", raising=False)
        get_settings.cache_clear()
        yield lambda *args: CliRunner().invoke(app, ["analyze", *map(str, args)])
    get_settings.cache_clear()


def test_a_program_with_main_is_analysed_with_the_launch_its_sizes_give():
    result = analysed("vector_add_main.cu")
    assert result.ok and not result.needs_sizes
    kernel = result.static.kernel("vector_add")
    assert (kernel.launch.block, kernel.launch.grid, kernel.launch.origin) == ((256, 1, 1), (4096, 1, 1),
                                                                              "launch-site")
    assert kernel.resources.registers > 0 and kernel.resources.spill_bytes == 0
    assert kernel.occupancy["sm_90"].occupancy == 1.0 and kernel.occupancy["sm_90"].limiter == "none"


def test_the_bytes_copied_to_and_from_the_device_are_the_minimum_traffic():
    result = analysed("vector_add_main.cu")
    assert result.static.min_bytes == 3 * 4 * (1 << 20)
    assert result.bytes_origin.startswith("cudaMemcpy")


def test_findings_are_ranked_with_a_suggestion_and_the_feedback_text_of_a_run():
    result = analysed("transpose_spaced.cu", (("N", 2048),))
    assert result.findings and all(f.suggestion for f in result.findings)
    assert result.feedback.startswith("Diagnosis") and result.findings[0].title in result.feedback


def test_a_coalesced_vector_add_gets_no_finding():
    # it used to get "scalar global accesses", a finding that fired on nearly every kernel
    result = analysed("vector_add_main.cu")
    assert result.ok and not result.findings


def test_the_spaced_launch_spelling_and_dim3_variables_give_block_and_grid():
    kernel = analysed("transpose_spaced.cu", (("N", 2048),)).static.kernel("transpose_naive")
    assert (kernel.launch.block, kernel.launch.grid) == ((32, 8, 1), (64, 256, 1))


def test_the_naive_transposes_strided_writes_are_the_first_finding():
    first = analysed("transpose_spaced.cu", (("N", 2048),)).findings[0]
    assert (first.tool, first.kernel, first.line) == ("coalescing", "transpose_naive", 8)


def test_a_size_read_at_run_time_is_named_with_the_flag_that_gives_it():
    result = analysed("transpose_spaced.cu")
    assert result.ok and result.static.kernel("transpose_naive").launch.grid is None
    assert list(result.needs_sizes) == ["N"]
    assert "--size N=VALUE" in result.sizes_message()


def test_file_scope_constants_and_a_defined_block_reach_a_launch_in_a_helper():
    result = analysed("reduce_constants.cu")
    kernel = result.static.kernel("block_sum")
    assert (kernel.launch.block, kernel.launch.grid) == ((128, 1, 1), ((1 << 22) // 512, 1, 1))
    assert kernel.resources.smem_bytes == 128 * 4 and kernel.resources.barriers == 1
    assert {"BLOCK_SIZE": 128, "N": 1 << 22, "ITEMS_PER_THREAD": 4}.items() <= result.file_values.items()


def test_a_given_size_wins_over_the_files_own_value():
    result = analysed("vector_add_main.cu", (("n", 4096),))
    assert result.static.kernel("vector_add").launch.grid == (16, 1, 1)
    assert result.diagnostics.bottleneck == "latency-bound"
    assert any(f.title == "grid too small to fill the GPU" for f in result.findings)


def test_flops_and_bytes_expressions_set_the_intensity():
    result = analysed("vector_add_main.cu", (("n", 1 << 20),), flops="n", nbytes="12 * n")
    assert (result.static.flops, result.static.min_bytes) == (1 << 20, 12 * (1 << 20))
    assert result.static.arithmetic_intensity == pytest.approx(1 / 12)
    assert (result.flops_origin, result.bytes_origin) == ("--flops", "--bytes")


def test_a_file_that_does_not_compile_gives_the_first_compiler_error():
    result = analysed("broken.cu")
    assert result.error_kind == "compile-error"
    assert 'broken.cu(5): error: identifier "factor" is undefined' in result.error


def test_a_file_that_does_not_compile_still_gets_what_its_source_shows():
    result = analysed("third_party_header.cu")
    assert result.error_kind == "compile-error" and "helper_cuda.h" in result.error
    assert result.source_only.startswith("source-only analysis") and "no registers" in result.source_only
    kernel = result.static.kernel("collide")
    assert kernel.launch.block == (256, 1, 1) and kernel.resources is None
    [finding] = [f for f in result.findings if f.tool == "coalescing"]
    assert "76 bytes apart" in finding.evidence and "idx * Q + q" in finding.evidence


def test_the_command_prints_the_source_only_report_with_its_reason(cli):
    done = cli(FIXTURES / "third_party_header.cu", "--arch", "sm_90")
    assert done.exit_code == 1 and "source-only analysis" in done.output and "helper_cuda.h" in done.output
    assert "uncoalesced global" in done.output and "Change:" in done.output


def test_a_file_with_no_kernels_says_so():
    result = analysed("host_only.cu")
    assert (result.error_kind, result.error) == ("no-kernels",
                                                 "no kernels found: host_only.cu defines no __global__ function")


@pytest.mark.parametrize(("name", "content"), [("model.py", b"import torch\n"), ("notes.txt", b"a kernel\n"),
                                               ("blob.cu", b"\x7fELF\x00\x01\x02")])
def test_what_is_not_cuda_source_is_refused_before_any_compile(name: str, content: bytes):
    result = analyse_file(content, name, arch="sm_90", cache_dir=cache_dir())
    assert result.error_kind == "not-cuda" and "not a CUDA file" in result.error and result.static is None


def test_sizes_parse_from_flags_or_one_line_and_may_be_arithmetic():
    assert parse_sizes(["N=4096", "M=1<<10"]) == {"N": 4096, "M": 1024}
    assert parse_sizes("N=8, K=N*2") == {"N": 8, "K": 16}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_sizes(["N"])


def test_the_command_prints_registers_occupancy_the_launch_and_the_findings(cli):
    done = cli(FIXTURES / "vector_add_main.cu", "--arch", "sm_90")
    assert done.exit_code == 0, done.output
    for words in ("vector_add", "registers", "occupancy", "grid 4096×1×1, block 256×1×1",
                  "No problem found by the diagnostic tools"):
        assert words in done.output
    done = cli(FIXTURES / "transpose_spaced.cu", "--size", "N=2048", "--arch", "sm_90")
    assert done.exit_code == 0 and "Diagnosis" in done.output and "Change:" in done.output


def test_the_command_asks_for_the_sizes_it_could_not_find(cli):
    done = cli(FIXTURES / "transpose_spaced.cu")
    assert done.exit_code == 0 and "sizes unknown" in done.output and "--size N=VALUE" in done.output


def test_json_output_parses_with_the_static_report_and_the_findings(cli):
    done = cli(FIXTURES / "transpose_spaced.cu", "--size", "N=1024", "--json")
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    kernel = data["static"]["kernels"][0]
    assert (kernel["launch"]["block"], kernel["launch"]["grid"]) == ([32, 8, 1], [32, 128, 1])
    assert kernel["resources"]["registers"] > 0 and kernel["occupancy"]["sm_90"]["blocks_per_sm"] > 0
    assert data["findings"][0]["tool"] == "coalescing" and data["sizes"] == {"N": 1024}


def test_the_command_exits_1_on_a_compile_error_and_2_on_what_is_not_cuda(cli, tmp_path: Path):
    broken = cli(FIXTURES / "broken.cu")
    assert broken.exit_code == 1 and "does not compile" in broken.output
    text = tmp_path / "notes.txt"
    text.write_text("nothing to see\n")
    refused = cli(text)
    assert refused.exit_code == 2 and "not a CUDA file" in refused.output


def test_a_malformed_size_is_refused_in_words(cli):
    done = cli(FIXTURES / "vector_add_main.cu", "--size", "N")
    assert done.exit_code == 2 and "NAME=VALUE" in done.output
