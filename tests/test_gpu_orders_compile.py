"""The GPU summation-order candidates (tests/honest/gpu_orders/ and the half-accumulating cheat) are checked
on a CPU as far as a CPU can: each one's CUDA_SOURCE, read from the file without importing it (CuPy need not be
installed), compiles with nvcc to an sm_90 cubin through the project's own build helper, and the static rules
pass the honest ones and name the cheat's half precision. Running them is tests/test_verify_honest_gpu.py's."""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from engine.compilation.candidate import build_candidate
from engine.compilation.cuda import compile_cubin
from engine.problems import load_problem
from engine.verify.static_rules import check_static

TESTS = Path(__file__).parent
HONEST = ["serial_k.py", "split_k_atomic.py", "tiled.py", "tree_k.py", "tree_reduction.py", "atomic_reduction.py"]
ORDERS = TESTS / "honest" / "gpu_orders"
CHEAT = TESTS / "cheats" / "half_accumulate_cuda.py"
CANDIDATES = [ORDERS / name for name in HONEST] + [CHEAT]


def cuda_source(path: Path) -> str:
    """The module-level CUDA_SOURCE string constant of a candidate file."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "CUDA_SOURCE"
                                                for t in node.targets):
            assert isinstance(node.value, ast.Constant) and isinstance(node.value.value, str), path
            return node.value.value
    raise AssertionError(f"{path.name} has no CUDA_SOURCE constant")


def test_every_candidate_has_its_cuda_source_as_a_constant():
    for path in CANDIDATES:
        assert "__global__" in cuda_source(path), path.name


def test_every_candidates_cuda_source_compiles_to_an_sm90_cubin(tmp_path):
    with ThreadPoolExecutor(max_workers=4) as pool:
        builds = dict(zip(CANDIDATES, pool.map(lambda p: compile_cubin(cuda_source(p), "sm_90", tmp_path),
                                                   CANDIDATES), strict=True))
    failures = {p.name: b.log[-800:] for p, b in builds.items() if not b.ok}
    assert not failures, "\n\n".join(f"{name}:\n{log}" for name, log in failures.items())
    assert all(b.output is not None and b.output.stat().st_size > 0 for b in builds.values())


def test_the_verifiers_own_build_finds_each_candidates_kernels_and_compiles_them(tmp_path):
    """What the verifier does before a run: a CuPy build, every kernel named, one cubin per CUDA source."""
    problems = {slug: load_problem(TESTS / "honest" / "problems" / slug) for slug in ("matmul-long-k", "row-sum-long")}
    for path in CANDIDATES:
        slug = "row-sum-long" if "reduction" in path.name else "matmul-long-k"
        build = build_candidate(problems[slug], path.read_text(), "python", arch="sm_90", cache_dir=tmp_path)
        assert build.ok and build.flavor == "cupy" and build.needs_gpu, (path.name, build.error, build.log[-800:])
        assert len(build.cubins) == 1 and build.kernel_names, (path.name, build.kernel_names)
        if path.name == "tree_reduction.py":
            assert set(build.kernel_names) == {"row_sum_slices", "row_sum_partials"}


def test_the_static_rules_pass_the_honest_orders_and_name_the_half_accumulation():
    for name in HONEST:
        failed = [f for f in check_static((ORDERS / name).read_text(), "python", "float32")
                  if not f.passed]
        assert not failed, (name, failed)
    cheat = check_static(CHEAT.read_text(), "python", "float32")
    precision = [f for f in cheat if f.check == "static:precision"]
    assert precision and not precision[0].passed and "half" in precision[0].detail, cheat
