"""The verifier's pure parts: output comparison, timing statistics and policy, the sandbox environment,
the audit hook, the process guard, job records."""

from __future__ import annotations

import math
import time

import pytest
import torch

from engine.verify import audit
from engine.verify.correctness import compare, poisoned_mask, same_values
from engine.verify.guards import ProcessGuard
from engine.verify.jobs import CArgSpec, ConfigSpec, Job, TimingSpec
from engine.verify.records import ConfigResult, EvaluationResult, IntegrityFinding, TimingStats, Verdict
from engine.verify.sandbox import clean_env, is_secret
from engine.verify.scrub import poison_
from engine.verify.timing import TrialPolicy, measure, stream_escape


def test_matching_outputs_pass_with_their_errors_reported():
    ref = torch.randn(8, 8, dtype=torch.float64)
    result = compare(ref.float(), ref, ref.float(), rtol=1e-4, atol=1e-5)
    assert result.ok and result.max_abs_error < 1e-6


def test_a_mismatch_reports_count_errors_and_the_first_index():
    ref = torch.zeros(4, 5, dtype=torch.float64)
    got = torch.zeros(4, 5)
    got[2, 3], got[3, 1] = 0.5, 0.25
    result = compare(got, ref, ref.float(), rtol=1e-4, atol=1e-5)
    assert not result.ok and result.first_mismatch == "output 0 at [2, 3]: got 0.5, expected 0"
    assert "2 of 20 elements differ" in result.message and result.max_abs_error == pytest.approx(0.5)


def test_nan_never_passes_even_where_the_reference_is_nan():
    ref = torch.tensor([1.0, float("nan")], dtype=torch.float64)
    assert not compare(torch.tensor([1.0, float("nan")]), ref, None, rtol=1.0, atol=1.0).ok
    assert not compare(torch.tensor([float("nan"), 0.0]), torch.zeros(2, dtype=torch.float64), None, 1.0, 1.0).ok


def test_matching_infinities_pass():
    ref = torch.tensor([float("inf"), -1.0])
    assert compare(torch.tensor([float("inf"), -1.0]), ref, None, rtol=1e-4, atol=1e-5).ok


def test_the_references_own_rounding_error_is_allowed_on_top_of_the_tolerance():
    ref64 = torch.tensor([1.0], dtype=torch.float64)
    native = torch.tensor([1.001], dtype=torch.float32)  # an ill-conditioned op: fp32 itself is this far off
    assert compare(torch.tensor([1.0009]), ref64, native, rtol=1e-4, atol=1e-5).ok
    assert not compare(torch.tensor([1.0009]), ref64, None, rtol=1e-4, atol=1e-5).ok


def test_shape_dtype_and_arity_mismatches_fail_with_a_reason():
    ref = torch.zeros(3, dtype=torch.float64)
    assert "shape" in compare(torch.zeros(4), ref, torch.zeros(3), 1e-4, 1e-5).message
    assert "dtype" in compare(torch.zeros(3, dtype=torch.float16), ref, torch.zeros(3), 1e-4, 1e-5).message
    assert "2 outputs" in compare([torch.zeros(3), torch.zeros(3)], [ref], [torch.zeros(3)], 1e-4, 1e-5).message


def test_integer_outputs_compare_exactly():
    ref = torch.arange(5, dtype=torch.int32)
    assert compare(ref.clone(), ref, ref, 0.0, 0.0).ok
    assert not compare(ref + 1, ref, ref, 0.0, 0.0).ok


def test_poisoned_outputs_are_recognised_as_never_written():
    out = poison_(torch.empty(10))
    out[:4] = 1.0
    assert int(poisoned_mask(out).sum()) == 6
    result = compare(out, torch.ones(10), None, 1e-4, 1e-5)
    assert not result.ok and result.unwritten == 6 and "never written" in result.message


def test_same_values_is_bitwise_and_treats_nan_as_equal():
    a = torch.tensor([1.0, float("nan")])
    assert same_values(a, a.clone()) and not same_values(a, torch.tensor([1.0, 2.0]))


def test_trial_policy_needs_both_minimums_and_stops_at_either_cap():
    policy = TrialPolicy(min_trials=30, min_seconds=1.0, max_trials=1000, max_seconds=10.0)
    assert not policy.done(30, 0.5) and not policy.done(10, 2.0)
    assert policy.done(30, 1.0) and policy.done(1000, 0.1) and policy.done(3, 11.0) and not policy.done(2, 11.0)


def test_cpu_measurement_times_every_callable_interleaved_with_median_and_iqr():
    calls = {"a": 0, "b": 0}

    def slow(_i):
        calls["a"] += 1
        time.sleep(0.002)

    def fast(_i):
        calls["b"] += 1

    stats = measure({"a": slow, "b": fast}, TrialPolicy(5, 0.0, 8, 5.0), "cpu", flush_bytes=1 << 16)
    assert stats["a"].trials == stats["b"].trials >= 5 and calls["a"] == calls["b"]
    assert stats["a"].median_us > 1500 > stats["b"].median_us and stats["a"].clock == "perf-counter"
    assert stats["a"].iqr_us >= 0 and stats["a"].wall_us is None


def test_stream_escape_is_a_wall_time_far_above_the_event_time():
    honest = TimingStats(median_us=200.0, iqr_us=1.0, mean_us=200.0, min_us=199.0, trials=30, wall_us=230.0)
    tiny_kernel = TimingStats(median_us=3.0, iqr_us=0.1, mean_us=3.0, min_us=2.9, trials=30, wall_us=40.0)
    escaped = TimingStats(median_us=5.0, iqr_us=0.1, mean_us=5.0, min_us=4.9, trials=30, wall_us=400.0)
    assert stream_escape(honest) is None and stream_escape(tiny_kernel) is None
    assert "outside the timed stream" in stream_escape(escaped)


def test_a_tiny_kernel_behind_slow_launches_is_not_a_stream_escape_but_hidden_work_still_is():
    # 3 µs of kernel behind 140 µs of launch overhead per call: the wall time is the host's, not hidden work.
    slow_host = TimingStats(median_us=3.0, iqr_us=0.1, mean_us=3.0, min_us=2.9, trials=30, wall_us=150.0,
                            host_us=140.0)
    hidden = TimingStats(median_us=3.0, iqr_us=0.1, mean_us=3.0, min_us=2.9, trials=30, wall_us=900.0,
                         host_us=20.0)
    assert stream_escape(slow_host) is None
    assert "20.0 µs to issue" in stream_escape(hidden)


def test_worker_environment_drops_secrets_and_keeps_the_toolchain(tmp_path):
    base = {"OPENAI_API_KEY": "sk-x", "REFINERY_DATABASE_URL": "postgresql://u:p@h/db", "GITHUB_TOKEN": "t",
            "MY_SECRET": "s", "PGPASSWORD": "p", "PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda", "HOME": "/root"}
    env = clean_env(tmp_path, base=base)
    assert not {"OPENAI_API_KEY", "REFINERY_DATABASE_URL", "GITHUB_TOKEN", "MY_SECRET", "PGPASSWORD"} & set(env)
    assert env["PATH"] == "/usr/bin" and env["CUDA_HOME"] == "/usr/local/cuda" and env["TMPDIR"] == str(tmp_path)
    assert is_secret("anthropic_api_key") and not is_secret("CUDA_VISIBLE_DEVICES")


def test_audit_hook_records_reads_outside_the_allowed_folders_only_while_watching(tmp_path):
    allowed, denied = tmp_path / "allowed", tmp_path / "denied"
    allowed.mkdir(), denied.mkdir()
    (allowed / "a.txt").write_text("a"), (denied / "b.txt").write_text("b")
    audit.install(read_roots=[], write_roots=[allowed], denied_roots=[denied])
    audit.take_events()
    (denied / "b.txt").read_text()  # not watching: not recorded
    with audit.watching():
        (allowed / "a.txt").read_text()
        (denied / "b.txt").read_text()
    events = audit.take_events()
    assert len(events) == 1 and "b.txt" in events[0]


def test_process_guard_reports_and_restores_a_patched_timer():
    guard = ProcessGuard()
    original = time.perf_counter
    time.perf_counter = lambda: 0.0
    try:
        patched, flags, threads = guard.check()
    finally:
        time.perf_counter = original
    assert patched == ["time.perf_counter"] and not flags and not threads
    assert time.perf_counter is original


def test_process_guard_reports_a_changed_precision_flag():
    guard = ProcessGuard()
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = not before
    _, flags, _ = guard.check()
    assert flags and torch.backends.cuda.matmul.allow_tf32 == before


def test_job_round_trips_through_json():
    job = Job(kind="c", device="cpu", candidate_source="s", candidate_language="c", init_seed=7,
              configs=[ConfigSpec("small", False, {"n": 4}, [1, 2], [CArgSpec("x", "float", True, "in", 4)])],
              timing=TimingSpec("small", 3))
    again = Job.from_json(job.to_json())
    assert again == job and isinstance(again.configs[0].c_args[0], CArgSpec)


def test_evaluation_result_round_trips_through_json():
    stats = TimingStats(10.0, 1.0, 10.5, 9.0, 30, 11.0)
    result = EvaluationResult(Verdict.CORRECT, "ok", configs=[ConfigResult("a", True, True, candidate=stats,
                                                                           baselines={"eager": stats}, seeds=[1])],
                              integrity=[IntegrityFinding("x", True)], speedup=2.0)
    again = EvaluationResult.from_json(result.to_json())
    assert again == result and math.isclose(again.configs[0].candidate.cv, 1.0 / 1.349 / 10.0)
