"""benchmarks/honest_concurrency.py on this CPU: the honest set it picks per device, what it counts as a false
reject, and a real run of two tiny CPU candidates writing one JSON line each and the summary."""

from __future__ import annotations

import json
from types import SimpleNamespace

from engine.schema.verdict import EvaluationResult, IntegrityFinding, Verdict
from engine.settings import get_settings
from engine.verify.evaluate import Verifier
from tests.benchmark_scripts import load_benchmark


def _script():
    return load_benchmark("honest_concurrency")


def test_the_gpu_set_has_the_honest_fixtures_and_the_cpu_set_only_what_runs_on_a_cpu():
    bench = _script()
    gpu = {(h.problem.slug, h.name) for h in bench.honest_set(True, ["honest"], [])}
    cpu = {(h.problem.slug, h.name) for h in bench.honest_set(False, ["honest"], [])}
    assert ("relu-small", "honest/gpu_two_streams.py") in gpu and ("scale-small", "naive") in gpu
    assert ("relu-small", "cheats/honest.py") not in gpu  # plain torch launches no kernel of its own
    assert {("matmul-long-k", "honest/gpu_orders/split_k_atomic.py"),
            ("row-sum-long", "honest/gpu_orders/atomic_reduction.py")} <= gpu
    assert cpu == {("relu-small", "cheats/honest.py"), ("matmul-long-k", "honest/arithmetic/serial_k.py"),
                   ("matmul-long-k", "honest/arithmetic/tree_k.py"), ("scale-small", "cpu-naive")}
    assert not any("half_accumulate" in name or "tf32" in name or name == "honest/arithmetic/split_k.py"
                   for _, name in gpu | cpu)
    library = bench.honest_set(True, ["library"], ["relu"])
    assert library and all(h.problem.slug == "relu" and h.origin == "library" for h in library)


def test_each_copy_is_new_text_for_the_build_cache_and_groups_go_round_by_round():
    bench = _script()
    honest = bench.honest_set(False, ["honest"], ["relu-small", "scale-small"])
    groups = bench.groups_of(honest, 2, "stamp")
    assert [(g[0].round, g[0].honest.problem.slug) for g in groups] == [
        (0, "relu-small"), (0, "scale-small"), (1, "relu-small"), (1, "scale-small")]
    sources = [c.source for g in groups for c in g]
    assert len(set(sources)) == 4 and sources[1].endswith("/* honest-concurrency stamp round 0 */\n")


def test_a_reject_is_a_failed_verdict_check_or_flag_but_not_the_speedup_thresholds_reproduced_flag():
    bench = _script()
    ok = EvaluationResult(Verdict.CORRECT, "correct", integrity=[IntegrityFinding("stream-escape", True, "fine")])
    assert bench.false_reject(ok) == ""
    assert bench.false_reject(EvaluationResult(Verdict.INCORRECT, "wrong")).startswith("incorrect")
    failed = EvaluationResult(Verdict.CORRECT, "correct", integrity=[IntegrityFinding("torch-op", False, "called mm")])
    assert bench.false_reject(failed).startswith("failed checks: torch-op")
    reproduced = _rechecked(first=63.6, again=63.8)
    assert reproduced.flagged and bench.false_reject(reproduced) == ""
    reproduced.flag_reason += "; the candidate's answer matched the reference's own rounding"
    assert bench.false_reject(reproduced).startswith("flagged")
    assert bench.false_reject(_rechecked(first=63.6, again=None)).startswith("flagged")  # did not reproduce
    withheld = EvaluationResult(Verdict.CORRECT, "correct", notes=["no speed credited: the machine was busy"])
    assert bench.speed_withheld(withheld) and not bench.speed_withheld(ok)


def _rechecked(first: float, again: float | None) -> EvaluationResult:
    """What `Verifier.recheck` makes of a speedup over the threshold that a fresh process reproduced."""
    pool = SimpleNamespace(run=lambda *args, **kwargs: None)
    verifier = Verifier(pool=pool, settings=SimpleNamespace(suspicious_speedup=10.0))
    verifier.job_for = lambda *args, **kwargs: None
    verifier.finish = lambda *args: EvaluationResult(Verdict.CORRECT, "correct", speedup=again)
    return verifier.recheck(None, None, "", [], EvaluationResult(Verdict.CORRECT, "correct", speedup=first))


def test_two_cpu_candidates_verified_concurrently_report_a_line_each_and_the_summary(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("REFINERY_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("REFINERY_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    out = tmp_path / "honest.jsonl"
    try:
        code = _script().main(["--only-honest", "--problems", "relu-small,scale-small", "--rounds", "1",
                               "--out", str(out)])
    finally:
        get_settings.cache_clear()
    assert code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    rows, summary = lines[:-1], lines[-1]["summary"]
    assert {(r["problem"], r["candidate"], r["round"]) for r in rows} == {
        ("relu-small", "cheats/honest.py", 0), ("scale-small", "cpu-naive", 0)}
    assert summary["candidates"] == 2 and summary["device"] == "cpu" and summary["torch"]
    assert sum(summary["verdicts"].values()) == 2 and summary["wall_s"] > 0
    assert summary["false_rejects"] == sum(r["false_reject"] for r in rows) == len(summary["false_reject_list"])
    assert summary["speed_withheld"] == sum(r["speed_withheld"] for r in rows)
    assert summary["verdicts"] == {"correct": 2}, [r["why"] for r in rows]
    assert f"FALSE REJECTS: {summary['false_rejects']}" in capsys.readouterr().out

