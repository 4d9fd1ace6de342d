"""benchmarks/library_recording.py: the GPU library check's result lines become a recording that loads
as one finished run per problem, with the measured times, the device, and static features (CPU only)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from sqlmodel import select

from db import runs_repo
from db.labels import load_evidence
from db.models import Diagnostic
from db.session import session_scope
from engine.compilation.cuda import content_key
from engine.problems import get_problem
from engine.schema.verdict import ConfigResult, EvaluationResult, IntegrityFinding, KernelLaunch, TimingStats, Verdict
from engine.settings import get_settings
from engine.store.recorded import load_recorded
from tests.benchmark_scripts import load_benchmark

DEVICE = "NVIDIA H200"
MEASURED_US = {"naive": 103.2, "grid-stride": 71.5, "vectorized": 64.8}
EAGER_US = 68.3


def _script():
    return load_benchmark("library_recording")


def _timing(median_us: float) -> TimingStats:
    return TimingStats(median_us=median_us, iqr_us=0.5, mean_us=median_us + 1.0, min_us=median_us - 1.0, trials=300,
                       wall_us=median_us + 2.0)


def _result(name: str, candidate_us: float) -> dict:
    problem = get_problem("relu")
    configs = [ConfigResult(name=c.name, hidden=c.hidden, ok=True, max_abs_error=0.0, max_rel_error=0.0, seeds=[1, 2],
                            candidate=_timing(candidate_us) if c.name == "large" else None,
                            baselines={"eager": _timing(EAGER_US)} if c.name == "large" else {})
               for c in problem.configs]
    return EvaluationResult(
        verdict=Verdict.CORRECT, message=f"correct on {len(configs)} configurations; {candidate_us} µs on 'large'",
        configs=configs, integrity=[IntegrityFinding("kernel-coverage", True, "own kernels 50% of GPU time")],
        kernels=[KernelLaunch(f"relu_{name.replace('-', '_')}", 1, candidate_us, 0.5, True),
                 KernelLaunch("refinery::call", 1, candidate_us, 0.5, False)],
        timed_config="large", candidate_us=candidate_us, baseline_us=EAGER_US, baseline_name="eager",
        speedup=EAGER_US / candidate_us, device=DEVICE, build_seconds=0.5, seeds=[1, 2]).to_json()


def _results_file(path: Path) -> Path:
    impls = [i for i in get_problem("relu").implementations if i.device == "cuda"]
    assert {i.name for i in impls} == set(MEASURED_US)
    with path.open("w") as handle:
        for impl in impls:  # the lines tests/test_verify_gpu.py::_record writes
            handle.write(json.dumps({"problem": "relu", "implementation": impl.name, "strategy": impl.strategy,
                                     "language": impl.language,
                                     "result": _result(impl.name, MEASURED_US[impl.name])}) + "\n")
    return path


def test_library_check_results_load_as_one_recorded_run_with_measurements_and_features(refinery_home, tmp_path,
                                                                                       capsys, monkeypatch):
    monkeypatch.setenv("REFINERY_GPU_ARCH", "sm_80")  # not the measured device's: the script must not use it
    get_settings.cache_clear()
    results = _results_file(tmp_path / "results.jsonl")
    folder = tmp_path / "recorded"
    assert _script().main([str(results), "--out", str(folder / "h200-library-check.jsonl")]) == 0
    printed = capsys.readouterr().out
    assert "relu" in printed and "3 candidates" in printed and "3 correct" in printed and "sm_90" in printed
    # The scratch database is gone from the settings: loading goes to this test's own database.
    assert "REFINERY_DATABASE_URL" not in os.environ
    assert str(refinery_home) in get_settings().resolved_database_url

    assert load_recorded(folder) == 1
    (run,) = runs_repo.list_runs()
    assert run.recorded and run.status == "finished" and run.device == DEVICE
    assert (run.problem_slug, run.proposer, run.strategy, run.rounds_budget) == ("relu", "library", "library-check", 1)
    rows = runs_repo.tree_rows(run.id)
    assert len(rows) == len(MEASURED_US)
    problem = get_problem("relu")
    for sample, row in enumerate(rows):
        candidate, evaluation = row.candidate, row.evaluation
        impl = problem.implementation(candidate.proposal["implementation"])
        assert (candidate.step, candidate.sample, candidate.depth, candidate.parent_id) == (1, sample, 0, None)
        assert candidate.origin == "library" and candidate.strategy == impl.strategy == candidate.proposal["strategy"]
        assert candidate.language == impl.language and candidate.source == impl.source
        assert candidate.source_hash == content_key(impl.source)
        assert candidate.proposal["tunables"] and candidate.proposal["signature"].startswith(impl.name)
        assert evaluation.recorded and evaluation.verdict == "correct" and evaluation.device == DEVICE
        assert evaluation.candidate_us == MEASURED_US[impl.name] and evaluation.baseline_us == EAGER_US
        assert evaluation.reward is not None and evaluation.timing["timed_config"] == "large"
        assert row.feedback is not None

    with session_scope() as session:
        statics = session.exec(select(Diagnostic).where(Diagnostic.kind == "static")).all()
    assert len(statics) == len(MEASURED_US)
    assert all(d.data["ok"] and d.data["arch"] == "sm_90" and d.data["features"] for d in statics)

    evidence = load_evidence(problem_slugs=["relu"])
    assert len(evidence) == len(MEASURED_US)
    for item in evidence:
        assert item.features, "static diagnostics carry the ranker's features"
        assert [(m.device, m.candidate_us) for m in item.measurements] == [(DEVICE, item.candidate_us)]


def test_static_analysis_targets_the_measured_device_and_later_lines_replace_earlier_ones(tmp_path):
    script = _script()
    assert script.arch_for("NVIDIA H200") == script.arch_for("NVIDIA H100 80GB HBM3") == "sm_90"
    assert script.arch_for("NVIDIA A100-SXM4-80GB") == "sm_80"
    assert script.arch_for("cpu") is None and script.arch_for("Some Future GPU") is None

    results = _results_file(tmp_path / "results.jsonl")
    first = results.read_text().splitlines()[0]
    results.write_text(results.read_text() + first + "\n")
    (group,) = script.read_results(results)
    assert group.replaced == 1 and list(group.lines)[-1] == json.loads(first)["implementation"]
    assert group.device == DEVICE


def test_lines_measured_with_the_profiler_range_among_the_kernels_get_their_shares_re_derived():
    line = json.loads(_results_file_line("vectorized"))
    result = _script().measured_result(line)
    assert [k.name for k in result.kernels] == ["relu_vectorized"]
    assert result.own_kernel_share == 1.0
    (coverage,) = [f for f in result.integrity if f.check == "kernel-coverage"]
    assert coverage.passed and coverage.detail.startswith("own kernels 100% of GPU time")

    clean = EvaluationResult.from_json(line["result"])
    clean.kernels = [KernelLaunch("relu_vectorized", 1, 60.0, 0.75, True), KernelLaunch("aten_fill", 1, 20.0, 0.25,
                                                                                          False)]
    line["result"] = clean.to_json()
    untouched = _script().measured_result(line)
    assert [(k.name, k.share) for k in untouched.kernels] == [("relu_vectorized", 0.75), ("aten_fill", 0.25)]
    assert untouched.integrity[0].detail == "own kernels 50% of GPU time", "a line without the range is kept as is"


def _results_file_line(name: str) -> str:
    return json.dumps({"problem": "relu", "implementation": name, "strategy": name, "language": "python",
                       "result": _result(name, MEASURED_US[name])})
