"""The verifier's pure parts: output comparison, timing statistics and policy, the judge's clock check,
the sandbox environment, the runner's audit hook and process guard, job records and what a runner sees."""

from __future__ import annotations

import ctypes
import math
import time

import pytest
import torch

from engine.sandbox.programs import UNTRUSTED_PACKAGES, is_secret, python_env
from engine.schema.verdict import ConfigResult, EvaluationResult, IntegrityFinding, TimingStats, Verdict
from engine.untrusted.runner import audit
from engine.untrusted.runner.guards import ProcessGuard
from engine.verify.judge.clock import Block, alternate_blocks, block_plan, corroborate, median_ci
from engine.verify.judge.correctness import compare, same_values
from engine.verify.judge.job import CArgSpec, ConfigSpec, Job, TimingSpec
from engine.wire.poison import poison_, poisoned_mask
from engine.wire.timing import TrialPolicy, measure


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


def test_the_trial_policy_defaults_are_declared_once():
    """TrialPolicy is the one record of how trials are run: the job's timing, the parent's options and the
    settings hold one rather than fields of their own, and a policy made from default settings is the
    record's defaults (but for target_ci, the one number the product sets on purpose: the record's 0 times
    everything its numbers ask for, as a caller that names its numbers expects)."""
    from dataclasses import fields, replace
    from types import SimpleNamespace

    from engine.settings import Settings
    from engine.verify.evaluate import VerifyOptions
    from engine.verify.prepare import POLICY_SETTINGS, TimingOptions, policy_from_settings

    policy_fields = {f.name for f in fields(TrialPolicy)}
    for record in (TimingSpec, TimingOptions, VerifyOptions, Job):
        assert not policy_fields & {f.name for f in fields(record)}, f"{record.__name__} repeats the policy's fields"
    assert TimingSpec("small", 1).policy == TimingOptions().policy == TrialPolicy()

    policy_settings = {name for name in Settings.model_fields if name.startswith("timing_")} - {"timing_cores"}
    assert set(POLICY_SETTINGS.values()) == policy_settings  # a new policy setting goes through the one conversion
    assert set(POLICY_SETTINGS) <= policy_fields
    defaults = SimpleNamespace(**{name: Settings.model_fields[name].default for name in policy_settings})
    product = Settings.model_fields["timing_target_ci"].default
    assert policy_from_settings(defaults) == replace(TrialPolicy(), target_ci=product)


def test_the_parent_holds_a_policy_without_importing_torch():
    import subprocess
    import sys

    code = "import sys, engine.verify.prepare, engine.verify.judge.job; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_job_carries_the_policy_it_was_given_through_json():
    import json

    policy = TrialPolicy(5, 0.25, 8, 2.0, floor_trials=4, flush_bytes=1 << 20, target_ci=0.01)
    job = Job(kind="pytorch", device="cpu", candidate_source="s", candidate_language="python", init_seed=7,
              configs=[ConfigSpec("small", False, {"n": 4}, [1])],
              timing=TimingSpec("small", 3, policy, baselines=["eager", "compile"], energy_seconds=1.5))
    again = Job.from_json(json.loads(job.dumps()))
    assert again == job and again.timing.policy == policy and isinstance(again.timing.policy, TrialPolicy)


def test_an_exact_policy_runs_exactly_its_trials():
    policy = TrialPolicy.exactly(7, flush_bytes=1 << 12)
    assert not policy.done(6, 1e6) and policy.done(7, 0.0) and policy.flush_bytes == 1 << 12


def test_cpu_measurement_times_every_callable_interleaved():
    calls = {"a": 0, "b": 0}

    def slow(_i):
        calls["a"] += 1
        time.sleep(0.002)

    def fast(_i):
        calls["b"] += 1

    samples = measure({"a": slow, "b": fast}, TrialPolicy(5, 0.0, 8, 5.0, flush_bytes=1 << 16), "cpu")
    assert len(samples["a"].times_us) == len(samples["b"].times_us) >= 5 and calls["a"] == calls["b"]
    stats = {name: TimingStats.from_samples(s.times_us, s.clock) for name, s in samples.items()}
    assert stats["a"].median_us > 1500 > stats["b"].median_us and stats["a"].clock == "perf-counter"
    assert stats["a"].iqr_us >= 0 and samples["a"].wall_us is None


def _blocks(claimed_us: float, clock_us: float, trials: int = 100, blocks: int = 3) -> list[Block]:
    per = trials // blocks
    return [Block([claimed_us] * per, clock_us * per) for _ in range(blocks)]


def test_the_judges_clock_corroborates_an_honest_claim():
    baseline = _blocks(claimed_us=300.0, clock_us=380.0)  # 80 µs of loop overhead per trial (flush, events)
    honest = _blocks(claimed_us=120.0, clock_us=205.0)
    verdict = corroborate(honest, baseline, round_trip_us=100.0)
    assert verdict.ok and verdict.baseline_overhead_us == pytest.approx(80.0)


def test_the_judges_clock_catches_a_patched_timer():
    baseline = _blocks(claimed_us=300.0, clock_us=380.0)
    forged = _blocks(claimed_us=10.0, clock_us=210.0)  # the work took 120 µs; the timer says 10
    verdict = corroborate(forged, baseline, round_trip_us=100.0)
    assert not verdict.ok and verdict.unexplained_us > 100 and "misreported its own timing" in verdict.detail


def test_work_on_a_hidden_stream_shows_on_the_judges_clock():
    baseline = _blocks(claimed_us=50.0, clock_us=70.0)
    escaped = _blocks(claimed_us=5.0, clock_us=600.0)  # the events saw a launch, the device ran for 580 µs more
    assert not corroborate(escaped, baseline, round_trip_us=50.0).ok


def test_the_medians_confidence_interval_narrows_with_more_trials_and_widens_with_noise():
    import random

    rng = random.Random(0)
    steady = [100.0 + rng.gauss(0, 0.2) for _ in range(400)]
    noisy = [100.0 + rng.gauss(0, 20.0) for _ in range(400)]
    assert median_ci(steady[:9]) == math.inf
    assert median_ci(steady) < median_ci(steady[:40]) < 0.005
    assert median_ci(noisy) > 0.005


def test_timing_stops_once_both_medians_are_precise_and_runs_the_whole_plan_when_they_are_not():
    import random

    rng = random.Random(1)

    def side(sigma: float):
        return lambda count: Block([100.0 + rng.gauss(0, sigma) for _ in range(count)], 100.0 * count)

    plan = block_plan(600, 0.005)
    assert len(plan) == 12 and sum(plan) == 600 and block_plan(600, 0.0) == [200, 200, 200]
    mine, theirs = alternate_blocks(plan, side(0.2), lambda n: {"eager": side(0.2)(n)}, 30, 0.005)
    assert len(mine) == 3 and len(theirs["eager"]) == 3  # three blocks a side, then precise: stopped
    mine, theirs = alternate_blocks(plan, side(0.2), lambda n: {"eager": side(40.0)(n)}, 30, 0.005)
    assert len(mine) == 12 and sum(len(b.times_us) for b in theirs["eager"]) == 600  # a noisy baseline: all of it
    mine, _ = alternate_blocks(block_plan(600, 0.0), side(0.2), lambda n: {}, 30, 0.0)
    assert [len(b.times_us) for b in mine] == [200, 200, 200]


def test_on_a_gpu_the_first_three_blocks_hold_the_minimum_so_a_steady_kernel_stops_there():
    import random

    rng = random.Random(2)

    def side(sigma: float):
        return lambda count: Block([100.0 + rng.gauss(0, sigma) for _ in range(count)], 100.0 * count)

    plan = block_plan(400, 0.005, most_per_block=32, early_trials=30)
    assert plan[:3] == [10, 10, 10] and sum(plan) == 400 and max(plan) <= 32 and len(plan) <= 12 + 3
    mine, theirs = alternate_blocks(plan, side(0.2), lambda n: {"eager": side(0.2)(n)}, 30, 0.005)
    assert [len(b.times_us) for b in mine] == [10, 10, 10] and len(theirs["eager"]) == 3
    mine, _ = alternate_blocks(plan, side(0.2), lambda n: {"eager": side(40.0)(n)}, 30, 0.005)
    assert sum(len(b.times_us) for b in mine) == 400  # a noisy side still gets every trial planned
    assert block_plan(20, 0.005, early_trials=30) == [7, 7, 6]  # fewer than the first blocks would hold
    assert block_plan(400, 0.005, most_per_block=4, early_trials=30)[:3] == [4, 4, 4]  # outputs a block keeps
    assert block_plan(400, 0.005) == block_plan(400, 0.005, early_trials=None)  # the CPU's plan is unchanged


def test_worker_environment_is_an_allow_list_without_secrets(monkeypatch):
    for name, value in {"OPENAI_API_KEY": "sk-x", "REFINERY_DATABASE_URL": "postgresql://u:p@h/db",
                        "GITHUB_TOKEN": "t", "MY_SECRET": "s", "PGPASSWORD": "p", "CUDA_HOME": "/usr/local/cuda",
                        "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64"}.items():
        monkeypatch.setenv(name, value)
    env = python_env(UNTRUSTED_PACKAGES, OPENAI_API_KEY="sneaked-in", EXTRA="1")
    assert not {"OPENAI_API_KEY", "REFINERY_DATABASE_URL", "GITHUB_TOKEN", "MY_SECRET", "PGPASSWORD", "HOME"} & set(env)
    assert env["CUDA_HOME"] == "/usr/local/cuda" and env["LD_LIBRARY_PATH"].startswith("/usr/local/nvidia")
    assert env["EXTRA"] == "1" and "sk-x" not in str(env)
    assert is_secret("anthropic_api_key") and not is_secret("CUDA_VISIBLE_DEVICES")


def test_audit_hook_records_writes_outside_the_scratch_folder_only_while_watching(tmp_path):
    scratch, outside = tmp_path / "scratch", tmp_path / "outside"
    scratch.mkdir(), outside.mkdir()
    audit.install([str(scratch)])
    audit.take_events()
    (outside / "b.txt").write_text("b")  # not watching: not recorded
    with audit.watching():
        (scratch / "a.txt").write_text("a")
        (outside / "c.txt").write_text("c")
    events = audit.take_events()
    assert len(events) == 1 and "c.txt" in events[0]


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


def test_a_runner_is_told_the_code_but_no_seed_tolerance_or_answer():
    job = Job(kind="pytorch", device="cpu", candidate_source="class ModelNew: ...", candidate_language="python",
              init_seed=7, configs=[ConfigSpec("small", False, {"n": 4}, [123456789, 987654321]),
                                    ConfigSpec("odd", True, {"n": 4099}, [5])], rtol=1e-3,
              timing=TimingSpec("small", 555555), reference_path="/home/someone/.local/share/problems/x/reference.py")
    spec = job.candidate_spec().to_json()
    text = str(spec)
    assert "123456789" not in text and "987654321" not in text and "555555" not in text
    assert "rtol" not in text and "hidden" not in text and "/home/someone" not in text
    assert spec["configs"][0]["params"] == {"n": 4}
    assert "4099" not in text and "odd" not in text  # a hidden configuration's sizes: only when it runs
    assert job.hidden_call("odd")["config_call"]["params"] == {"n": 4099} and job.hidden_call("small") == {}


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


def test_the_c_reference_beside_a_gpu_candidate_is_sized_by_its_own_first_call():
    from engine.verify.judge.c_judge import REFERENCE_CALLS, reference_calls

    fewest, most = REFERENCE_CALLS
    assert reference_calls(50.0) == most  # a quick reference: every call it may have
    assert reference_calls(430_000.0) == 4  # 2mm's reference: about two seconds, not 4.3
    assert reference_calls(3_000_000.0) == fewest  # a slow one still gets a median of three
    assert reference_calls(0.0) == most


def test_judge_and_runner_time_c_calls_on_the_same_placements_and_values_in_the_same_order(tmp_path):
    """An atomics-bound kernel's time follows where its hot output lies (histogram: 30 % within a 1 KiB
    window on an H100), so the naive port the judge times and the candidate the runner times must see the
    same offsets, rotating through the same placements across blocks, on the same fresh values: every call
    a new rotation of the drawn inputs, its `inout` arrays restored to their rotated values and its outputs
    poisoned before it, untimed."""
    from engine.untrusted.runner.c_candidate import CCandidate
    from engine.verify.judge.c_judge import CJudge
    from engine.wire.c_entry import PLACEMENT_PERIOD, PLACEMENTS, ROTATED_BYTES, placement_residue
    from engine.wire.c_inputs import made_inputs
    from engine.wire.c_timing import values_of_call

    big = ROTATED_BYTES // 4 + 1  # floats: one array past the rotation threshold keeps a single placement
    args = [CArgSpec("n", "int", False, "in", value=1000), CArgSpec("x", "float", True, "out", big),
            CArgSpec("bins", "int", True, "out", 256), CArgSpec("acc", "double", True, "inout", 1000),
            CArgSpec("w", "float", True, "in", 1000)]
    config = ConfigSpec("large", False, {"n": 1000}, [5], args)
    job = Job(kind="c", device="cpu", candidate_source="s", candidate_language="c", init_seed=7,
              configs=[config], timing=TimingSpec("large", 5, baselines=["c-reference"]))
    runner = CCandidate(job.candidate_spec(), tmp_path, b"")
    values, drawn = made_inputs(runner.args("large"), {"n": 1000}, 5, None)
    assert drawn == {"x", "bins", "acc", "w"}

    def recorder(seen: list):
        def call(n, x, bins, acc, w):
            inout = torch.frombuffer((ctypes.c_double * 1000).from_address(acc), dtype=torch.float64)
            weights = torch.frombuffer((ctypes.c_float * 1000).from_address(w), dtype=torch.float32)
            out = torch.frombuffer((ctypes.c_int * 256).from_address(bins), dtype=torch.int32)
            seen.append((x % PLACEMENT_PERIOD, bins % PLACEMENT_PERIOD, acc % PLACEMENT_PERIOD, x, bins,
                         inout.clone(), weights.clone(), bool((out == -1).all())))
            inout.add_(1.0)  # the call changes its inout array, as a real one does
            weights.zero_()  # and scribbles over an input: the next call must not see it
            out.fill_(3)
        return call

    judged, run = [], []
    judge = CJudge(job, None, tmp_path, {})
    judge.baseline_fn, judge.ref_fn = None, recorder(judged)
    _, cpu = judge.baseline_fns(config, values, drawn, 5)
    reference = cpu["c-reference"]
    runner.fn = recorder(run)
    for block in (3, 5, 4):  # blocks as the judge alternates them; the placements cycle across blocks
        reference.start_block()
        for i in range(block):
            reference.before("c-reference", i)
            reference(i)
            reference.after("c-reference", i)
        _, digests = runner.time_block("large", 5, block, 0, 0)
        assert len(digests) == block and len(runner.timed.kept) == block
    assert [r[:3] for r in judged] == [r[:3] for r in run]
    assert [r[1] for r in run[:PLACEMENTS]] == [placement_residue(2, k) for k in range(PLACEMENTS)]
    assert len({r[4] for r in run}) == PLACEMENTS and len({r[3] for r in run}) == 1  # small rotate, big stays
    assert {r[0] for r in run} == {placement_residue(1)} and {r[2] for r in judged} == {placement_residue(3, k)
                                                                                        for k in range(PLACEMENTS)}
    for call, (mine, theirs) in enumerate(zip(run, judged, strict=True)):
        saw = values_of_call(values, drawn, args, 5, call)
        assert torch.equal(mine[5], torch.from_numpy(saw["acc"])) and torch.equal(theirs[5], mine[5])
        assert torch.equal(mine[6], torch.from_numpy(saw["w"])) and mine[7] and theirs[7]
    assert len({tuple(r[6][:8].tolist()) for r in run}) == len(run)  # no two calls saw the same values
    kept = runner.kept_outputs([0, 3])
    assert [len(k) for k in kept] == [3, 3] and int(kept[0][1][0]) == 3  # every output of the call, as written
    residues = [placement_residue(p) for p in range(16)]
    assert len({r % 4096 for r in residues}) == 16 and len({r // 1024 for r in residues}) == 16


def test_fresh_calls_give_every_call_new_values_in_the_same_tensors_and_keep_each_output():
    from engine.wire.fresh import FreshCalls, kept_digests, trial_seed
    from engine.wire.inputs import reuse_buffers

    def make(seed: int) -> list:
        generator = torch.Generator().manual_seed(seed)
        return [torch.randn(64, generator=generator)]

    out = torch.empty(64)

    def call(inputs: list) -> list:  # a candidate that hands back one buffer it rewrites every call
        return [torch.clamp(inputs[0], min=0, out=out)]

    calls = FreshCalls(make, call, base_seed=11, refill=reuse_buffers)
    tensor = calls.inputs[0]
    calls.start_block()
    measure({"c": calls}, TrialPolicy(4, 0.0, 4, 5.0, flush_bytes=1 << 12), "cpu", before=calls.before,
            after=calls.after, warmup=2)
    assert calls.inputs[0] is tensor and calls.calls == 6 and [c for c, _ in calls.kept] == [2, 3, 4, 5]
    for number, outputs in calls.kept:
        assert torch.equal(outputs[0], torch.relu(make(trial_seed(11, number))[0]))
    assert len(set(kept_digests(calls.kept))) == 4


def test_the_output_digest_follows_every_bit_and_is_the_same_on_every_side():
    from engine.wire.fresh import digest

    x = torch.randn(1000)
    same = x.clone()
    flipped = x.clone()
    flipped.view(torch.int32)[517] ^= 1
    assert digest([x]) == digest([same]) and digest([x]) != digest([flipped])
    assert digest([x.reshape(10, 100)]) != digest([x])  # the shape is part of it
    assert digest([x[:999]]) != digest([x[:998]]) and digest([torch.ones(3, dtype=torch.uint8)]) >= 0
    assert digest([x, 2]) != digest([x, 3]) and digest([x, 2]) == digest([same, 2])
    nudged = x.clone()
    nudged.view(torch.int32)[3] += 2  # two words moved by opposite amounts: a linear sum would not notice
    nudged.view(torch.int32)[4] -= 2
    assert digest([nudged]) != digest([x])


def test_seeding_the_generators_directly_draws_what_torch_manual_seed_draws():
    from engine.wire.inputs import seed_generators

    torch.manual_seed(1234)
    expected = (torch.randn(8), torch.rand(3), torch.randint(0, 9, (4,)))
    torch.manual_seed(99)  # moved elsewhere in between
    seed_generators(1234)
    drawn = (torch.randn(8), torch.rand(3), torch.randint(0, 9, (4,)))
    assert all(torch.equal(a, b) for a, b in zip(expected, drawn, strict=True))
