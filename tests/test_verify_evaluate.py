"""The evaluate API end to end on a CPU: verdicts with their evidence, seeds, timings and baselines;
CUDA candidates compiled and reported as needing a GPU; the `refinery verify` command; storage."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine.problems import get_problem, load_problem
from engine.schema.verdict import Verdict
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy
from tests.verify_support import require_speed, timed_until_credited, verifier_in_fresh_home

CHEATS = Path(__file__).parent / "cheats"
FAST = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=30, min_seconds=0.0, max_trials=30,
                                                             max_seconds=1.0, flush_bytes=1 << 20)), timeout_s=120)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), FAST) as verifier:
        yield verifier


@pytest.fixture(scope="module")
def relu():
    return load_problem(CHEATS / "problems" / "pytorch" / "relu-small")


@pytest.fixture(scope="module")
def scale():
    return load_problem(CHEATS / "problems" / "c" / "scale-small")


@pytest.fixture(scope="module")
def honest_result(verifier, relu):
    return timed_until_credited(lambda: verifier.evaluate(relu, (CHEATS / "honest.py").read_text()))


@pytest.fixture(scope="module")
def c_result(verifier, scale):
    return timed_until_credited(lambda: verifier.evaluate(scale, scale.implementation("cpu-naive").source, "c"))


def test_correct_pytorch_candidate_is_checked_on_every_configuration_including_hidden(honest_result, relu):
    assert honest_result.verdict == Verdict.CORRECT, honest_result.message
    assert [c.name for c in honest_result.configs] == [c.name for c in relu.configs]
    assert any(c.hidden for c in honest_result.configs) and all(c.ok for c in honest_result.configs)


def test_every_configuration_gets_two_fresh_recorded_seeds(honest_result):
    seeds = [s for c in honest_result.configs for s in c.seeds]
    assert all(len(c.seeds) == 2 for c in honest_result.configs)
    assert len(set(seeds)) == len(seeds) and set(seeds) <= set(honest_result.seeds)


def test_correct_candidate_is_timed_against_eager_on_the_same_inputs(honest_result):
    timed = next(c for c in honest_result.configs if c.candidate is not None)
    require_speed(honest_result)
    assert timed.name == honest_result.timed_config == "large"
    assert "eager" in timed.baselines and timed.candidate.trials >= 3
    assert honest_result.baseline_name == "eager"
    assert honest_result.speedup == pytest.approx(timed.baselines["eager"].median_us / timed.candidate.median_us)


def test_result_lists_the_integrity_checks_that_ran(honest_result):
    checks = {f.check for f in honest_result.integrity}
    assert {"static-rules", "input-mutation", "result-caching", "torch-op", "monkeypatch"} <= checks
    assert all(f.passed for f in honest_result.integrity)


def test_c_cpu_candidate_runs_fully_and_is_timed_against_the_c_reference(c_result):
    assert c_result.verdict == Verdict.CORRECT, c_result.message
    require_speed(c_result)
    assert c_result.baseline_name == "c-reference" and c_result.speedup > 0
    assert c_result.device == "cpu" and len(c_result.configs) == 4


def test_pytorch_cuda_candidate_compiles_and_needs_a_gpu(verifier):
    problem = get_problem("relu")
    result = verifier.evaluate(problem, problem.implementations[0].source)
    assert result.verdict == Verdict.NEEDS_GPU and "cubin" in result.message and not result.verdict.is_failure


def test_c_problem_cuda_candidate_compiles_and_needs_a_gpu(verifier, scale):
    result = verifier.evaluate(scale, scale.implementation("naive").source, "cuda")
    assert result.verdict == Verdict.NEEDS_GPU and "scale_naive" in result.message


def test_cuda_compile_error_is_reported_without_a_gpu(verifier, scale):
    broken = scale.implementation("naive").source.replace("if (i < n)", "if (i < n")
    result = verifier.evaluate(scale, broken, "cuda")
    assert result.verdict == Verdict.COMPILE_ERROR and "error" in result.message.lower()


def test_an_implausible_speedup_is_re_measured_in_a_fresh_process_and_flagged(verifier, scale):
    strict = Verifier(pool=verifier.pool, options=replace(FAST, suspicious_speedup=1e-6), settings=verifier.settings)
    result = timed_until_credited(lambda: strict.evaluate(scale, scale.implementation("cpu-naive").source, "c"))
    require_speed(result)  # a machine the judge saw busy credits no speed, so there is nothing to re-measure
    assert result.verdict == Verdict.CORRECT and result.flagged and "fresh process" in result.flag_reason


def test_evaluate_many_returns_one_result_per_candidate_in_order(verifier, scale):
    candidates = [(scale.implementation("cpu-naive").source, "c"), ((CHEATS / "c_input_mutation.c").read_text(), "c"),
                  ((CHEATS / "c_compile_error.c").read_text(), "c"), ((CHEATS / "c_partial.c").read_text(), "c")]
    verdicts = [r.verdict for r in verifier.evaluate_many(scale, candidates)]
    assert verdicts == [Verdict.CORRECT, Verdict.INTEGRITY_VIOLATION, Verdict.COMPILE_ERROR, Verdict.INCORRECT]


def test_evaluate_stream_builds_each_candidate_before_the_next_one_has_arrived(verifier, scale):
    import threading

    from engine.compilation.candidate import build_candidate

    first_building = threading.Event()

    def builder(problem, source, language, **options):
        first_building.set()
        return build_candidate(problem, source, language, **options)

    def arrivals():  # the second candidate comes only once the first one's build has started (or never)
        yield "fast", scale.implementation("cpu-naive").source, "c"
        assert first_building.wait(60), "the first build did not start before the next candidate arrived"
        yield "slow", (CHEATS / "c_compile_error.c").read_text(), "c"

    streaming = Verifier(pool=verifier.pool, options=FAST, settings=verifier.settings, builder=builder)
    results = streaming.evaluate_stream(scale, arrivals())
    assert {key: r.verdict for key, r in results.items()} == {"fast": Verdict.CORRECT, "slow": Verdict.COMPILE_ERROR}


def test_stored_evaluation_round_trips(honest_result, refinery_home):
    pytest.importorskip("sqlmodel")
    from engine.store.evaluation import latest_result, store_evaluation

    candidate_id, _ = store_evaluation(honest_result, problem_slug="relu-small", source="src", language="python")
    again = latest_result(candidate_id)
    assert again.verdict == honest_result.verdict and again.speedup == honest_result.speedup
    assert again.configs == honest_result.configs and again.seeds == honest_result.seeds


def test_verify_command_prints_the_evaluation_and_stores_it(refinery_home, tmp_path):
    pytest.importorskip("sqlmodel")
    from sqlmodel import select

    from db.models import Evaluation
    from db.session import session_scope
    from engine.cli import app

    candidate = tmp_path / "candidate.cu"
    candidate.write_text(get_problem("gemm").implementations[0].source)
    done = CliRunner().invoke(app, ["verify", str(candidate), "--problem", "gemm"])
    assert done.exit_code == 0, done.output
    assert "needs_gpu" in done.output
    with session_scope() as session:
        rows = session.exec(select(Evaluation)).all()
    assert len(rows) == 1 and rows[0].verdict == "needs_gpu"


def test_verify_command_exits_nonzero_on_a_failing_candidate(refinery_home):
    result = CliRunner().invoke(__import__("engine.cli", fromlist=["app"]).app,
                                ["verify", str(CHEATS / "c_compile_error.c"), "--problem", "gemm", "--no-store"])
    assert result.exit_code == 1 and "compile_error" in result.output


def test_a_module_without_modelnew_is_a_load_error_even_where_no_gpu_runs_it(verifier, relu):
    kernel_only = ('import cupy as cp\n\nSRC = r"""\nextern "C" __global__ void k(float* y) { y[0] = 1.0f; }\n"""\n'
                   'kernel = cp.RawKernel(SRC, "k")\n')  # kernels, but nothing to call them: not "needs a GPU"
    result = verifier.evaluate(relu, kernel_only)
    assert result.verdict == Verdict.LOAD_ERROR and result.message == "the module defines no class ModelNew"


def test_an_output_wrong_the_same_way_on_every_call_is_named_incorrect_not_a_cache(verifier, relu):
    """A constant wrong answer is wrong on every input: the verdict names the configurations where it is
    wrong, not result caching (which is an earlier right answer coming back on new inputs)."""
    constant = ("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                "        return torch.full_like(x, 7.0)\n")
    result = verifier.evaluate(relu, constant)
    assert result.verdict == Verdict.INCORRECT, result.message
    assert not any(f.check == "result-caching" and not f.passed for f in result.integrity)
    assert "wrong on" in result.message


def test_the_torch_build_that_ran_it_is_recorded_and_stored(honest_result):
    import torch

    from engine.store.evaluation import evaluation_row, result_from_row

    assert honest_result.torch_version == torch.__version__
    assert result_from_row(evaluation_row(honest_result, candidate_id=1)).torch_version == torch.__version__
