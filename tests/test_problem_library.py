"""The built-in library is complete and every part of it works on a machine with no GPU."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from engine.compilation.cuda import compile_cubin, compile_shared_library
from engine.compilation.extract import cuda_sources_from_python
from engine.problem_import.probe import compile_c_shared, probe_pytorch
from engine.problems import BUILTIN_DIR, scan
from engine.problems.c_args import arg_specs
from engine.problems.c_call import call_host
from engine.wire.c_entry import load_entry
from engine.wire.c_inputs import make_inputs
from tests.analysis_support import cache_dir

LIBRARY = scan(BUILTIN_DIR)
PROBLEMS = {p.slug: p for p in LIBRARY.problems}
PYTORCH = [p for p in LIBRARY.problems if p.kind == "pytorch"]
C_PROBLEMS = [p for p in LIBRARY.problems if p.kind == "c"]
CUDA_IMPLS = [(p, i) for p in LIBRARY.problems for i in p.implementations if i.device == "cuda"]
CPU_IMPLS = [(p, i) for p in C_PROBLEMS for i in p.implementations if i.device == "cpu"]


def test_every_builtin_problem_loads():
    assert not LIBRARY.errors, "\n".join(str(e) for e in LIBRARY.errors)


def test_library_has_at_least_twenty_problems_of_each_kind():
    assert len(PYTORCH) >= 20 and len(C_PROBLEMS) >= 20, (len(PYTORCH), len(C_PROBLEMS))


@pytest.mark.parametrize("slug", sorted(PROBLEMS))
def test_problem_has_configs_hidden_ones_a_model_and_diverse_implementations(slug):
    problem = PROBLEMS[slug]
    assert len(problem.configs) >= 3
    assert problem.hidden_configs, "at least one configuration must be hidden"
    for config in problem.configs:
        assert problem.flops(config) is not None and problem.min_bytes(config) > 0
    cuda = [i for i in problem.implementations if i.device == "cuda"]
    assert len(cuda) >= 3
    assert len({i.strategy for i in cuda}) >= 3, "implementations must differ in strategy"
    assert problem.expectations, "the strategies must promise at least one speed order"


@pytest.mark.parametrize("slug", sorted(p.slug for p in PYTORCH))
def test_pytorch_reference_runs_on_cpu_at_smallest_config(slug):
    problem = PROBLEMS[slug]
    result = probe_pytorch(problem.reference_path, problem.configs[0], run_forward=True)
    assert result["outputs"], "forward returned nothing"


@pytest.mark.parametrize("slug", sorted(p.slug for p in C_PROBLEMS))
def test_c_reference_compiles_and_runs_on_random_inputs(slug, tmp_path):
    problem = PROBLEMS[slug]
    library = tmp_path / "reference.so"
    done = compile_c_shared(problem.reference_path, library)
    assert done.returncode == 0, done.stderr
    config = problem.configs[0]
    specs = arg_specs(problem, config)
    values = make_inputs(specs, config.params, seed=1234, inputs_path=problem.inputs_path)
    before = {s.name: values[s.name].copy() for s in specs if s.is_array and s.intent != "in"}
    call_host(load_entry(library, problem.entry, specs)[1], specs, values)
    outputs = [s for s in specs if s.is_array and s.intent != "in"]
    assert all(np.isfinite(values[s.name]).all() for s in outputs)
    assert any(not np.array_equal(values[s.name], before[s.name]) for s in outputs), "reference wrote nothing"


def _compile_impl(problem, impl, cache: Path) -> list[str]:
    errors = []
    if impl.language == "python":
        extracted = cuda_sources_from_python(impl.source)
        if not extracted.sources:
            return [f"no CUDA source found ({'; '.join(extracted.notes)})"]
        for source in extracted.sources:
            build = compile_cubin(source, "sm_90", cache)
            if not build.ok:
                errors.append(build.log[-800:])
    else:
        build = compile_shared_library(impl.source, "sm_90", cache)
        if not build.ok:
            errors.append(build.log[-800:])
    return errors


@pytest.mark.slow
@pytest.mark.build
def test_every_cuda_implementation_compiles_for_sm90():
    # The build cache the analysis tests share: the same sources compiled once in a test run, not twice.
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {f"{p.slug}/{i.name}": pool.submit(_compile_impl, p, i, cache_dir()) for p, i in CUDA_IMPLS}
        failures = {name: errs for name, f in futures.items() if (errs := f.result())}
    assert CUDA_IMPLS
    assert not failures, "\n\n".join(f"{k}:\n" + "\n".join(v) for k, v in failures.items())


@pytest.mark.parametrize("key", sorted(f"{p.slug}/{i.name}" for p, i in CPU_IMPLS))
def test_cpu_implementation_matches_the_c_reference(key, tmp_path):
    slug, name = key.split("/")
    problem = PROBLEMS[slug]
    impl = problem.implementation(name)
    ref_lib, cand_lib = tmp_path / "ref.so", tmp_path / "cand.so"
    assert compile_c_shared(problem.reference_path, ref_lib).returncode == 0
    done = compile_c_shared(impl.path, cand_lib)
    assert done.returncode == 0, done.stderr
    config = problem.configs[0]
    specs = arg_specs(problem, config)
    rtol, atol = problem.tolerance
    expected = make_inputs(specs, config.params, seed=99, inputs_path=problem.inputs_path)
    got = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in expected.items()}
    call_host(load_entry(ref_lib, problem.entry, specs)[1], specs, expected)
    call_host(load_entry(cand_lib, problem.entry, specs)[1], specs, got)
    for spec in specs:
        if spec.is_array and spec.intent != "in":
            np.testing.assert_allclose(got[spec.name], expected[spec.name], rtol=rtol, atol=atol)
