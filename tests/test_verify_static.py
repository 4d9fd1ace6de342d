"""Static integrity rules: each cheating pattern is named with its line; no shipped implementation trips one."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.problems import scan_all
from engine.verify.static_rules import check_static

CHEATS = Path(__file__).parent / "cheats"


def rules(source: str, language: str = "python", dtype: str = "float32") -> set[str]:
    return {f.check.removeprefix("static:") for f in check_static(source, language, dtype)}


@pytest.mark.parametrize(("cheat", "rule"), [
    ("lower_precision.py", "precision"), ("monkeypatch.py", "monkeypatch"), ("reads_files.py", "file-access"),
    ("reads_files.py", "environment"), ("try_fallback.py", "try-fallback"),
    ("passthrough_subclass.py", "reference-subclass"), ("deferred_thread.py", "threads"),
    ("lazy_tensor.py", "tensor-subclass"), ("gpu_stream_escape.py", "extra-stream"),
    ("c_reads_env.c", "environment"), ("c_thread.c", "threads"), ("gpu_c_stream_escape.cu", "extra-stream"),
])
def test_cheat_is_caught_by_its_static_rule(cheat, rule):
    path = CHEATS / cheat
    language = {".py": "python", ".c": "c", ".cu": "cuda"}[path.suffix]
    assert rule in rules(path.read_text(), language)


def test_findings_name_the_line():
    finding = check_static((CHEATS / "monkeypatch.py").read_text(), "python", "float32")[0]
    assert "line 8:" in finding.detail


@pytest.mark.parametrize("cheat", ["monkeypatch.py", "reads_files.py", "passthrough_subclass.py", "deferred_thread.py",
                                   "gpu_stream_escape.py", "c_reads_env.c", "c_thread.c"])
def test_rules_a_runtime_check_can_decide_are_evidence_not_verdicts(cheat):
    path = CHEATS / cheat
    language = {".py": "python", ".c": "c", ".cu": "cuda"}[path.suffix]
    findings = check_static(path.read_text(), language, "float32")
    assert findings and all(f.passed and f.kind == "evidence" for f in findings)


@pytest.mark.parametrize("cheat", ["lower_precision.py", "lazy_tensor.py", "try_fallback.py"])
def test_rules_no_runtime_check_can_decide_stay_verdicts(cheat):
    findings = check_static((CHEATS / cheat).read_text(), "python", "float32")
    assert any(not f.passed and f.kind == "check" for f in findings)


def test_a_mention_in_a_comment_or_docstring_is_not_code():
    source = '"""open() the file and use torch.cuda.Stream"""\n# time.perf_counter = x\nimport torch\n'
    assert rules(source) == set()
    assert rules("// fopen getenv cudaStreamCreate\nvoid f(void) {}\n", "c") == set()


def test_precision_rules_follow_the_problem_dtype():
    half_kernel = 'K = r"""__global__ void k(__half* x) { x[0] = __float2half(1.f); }"""'
    assert "precision" in rules(half_kernel, dtype="float32")
    assert "precision" not in rules(half_kernel, dtype="float16")
    tf32 = "import torch\ntorch.backends.cuda.matmul.allow_tf32 = True\n"
    assert "precision" in rules(tf32, dtype="float32") and "precision" not in rules(tf32, dtype="tf32")


def test_a_variable_named_half_is_not_half_precision():
    assert rules("__global__ void k(int n) { int half = n / 2; (void)half; }", "cuda") == set()


def test_dynamic_getattr_on_torch_is_flagged_because_it_hides_names():
    assert "monkeypatch" in rules('import torch\ns = getattr(torch.cuda, "Str" + "eam")()\n')


def test_setting_env_for_a_load_inline_build_is_allowed_but_reading_it_is_not():
    assert rules('import os\nos.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"\n') == set()
    assert "environment" in rules('import os\nx = os.environ["HOME"]\n')
    assert "environment" in rules("import os\nx = os.getenv('HOME')\n")


def test_external_stream_over_torchs_current_stream_is_the_taught_form_and_allowed():
    source = ("import cupy as cp\nimport torch\n"
              "with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):\n    pass\n")
    assert rules(source) == set()


def test_no_shipped_implementation_trips_a_static_rule():
    scan = scan_all()
    checked = 0
    for problem in scan.problems:
        for impl in problem.implementations:
            found = check_static(impl.source, impl.language, problem.dtype)
            assert not found, f"{problem.slug}/{impl.name}: {[f.detail for f in found]}"
            checked += 1
    assert checked > 0
