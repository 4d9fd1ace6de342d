"""Judging a C problem's candidate: the judge runs the C reference (and times the baselines, the naive
CUDA port and the C reference), the runner calls the candidate's entry point on buffers it fills from
the judge's seeds.

Per configuration and trial: the judge's reference answer on the host values of the seed, the
runner's outputs compared with it (its `out` arrays were poisoned, so one never written is named as
such), its `in` arrays after the call compared with the originals, and two trials' outputs (same
buffers, new values) compared with each other. Timing is in blocks checked against the judge's clock,
and the outputs of the timed calls are checked too.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

from engine.schema.verdict import ConfigResult, EvaluationResult, TimingStats, Verdict
from engine.verify.judge import clock
from engine.verify.judge.correctness import compare, looks_cached
from engine.verify.judge.energy import record_energy
from engine.verify.judge.job import ConfigSpec, Job
from engine.verify.judge.outcome import JobFailure, JobState, failure_result, final_result, judged
from engine.verify.judge.reveal import REVEALS_PER_BLOCK, Answer, Reveals
from engine.verify.judge.session import RunnerSession
from engine.wire import timing
from engine.wire.c_entry import load_entry
from engine.wire.c_inputs import ArgSpec, made_inputs
from engine.wire.c_timing import CTimedCalls, values_of_call
from engine.wire.fresh import ring_trials

REFERENCE_CACHE_BYTES = 8 * 2**30
REFERENCE_TIMING_US = 2e6  # host-clock budget for the C reference beside a GPU candidate, after one warm-up call
REFERENCE_CALLS = (3, 10)  # fewest calls (a median that one slow call cannot move), most
_answers: OrderedDict[tuple, dict] = OrderedDict()  # (reference digest, params, seed) → output arrays


def reference_calls(first_call_us: float) -> int:
    """How many timed calls the C reference gets beside a GPU candidate, sized by its own first call:
    a reference at a GPU-sized configuration can take a second a call, and its time says nothing of
    the candidate's."""
    fewest, most = REFERENCE_CALLS
    return max(fewest, min(most, int(REFERENCE_TIMING_US / max(first_call_us, 1.0))))


def _arg_specs(spec: ConfigSpec) -> list[ArgSpec]:
    return [ArgSpec(a.name, a.base_type, a.is_array, a.intent, a.size, a.value, a.init) for a in spec.c_args]


class CJudge:
    def __init__(self, job: Job, runner: RunnerSession, scratch: Path, libraries: dict[str, bytes]) -> None:
        self.job, self.runner, self.scratch = job, runner, scratch
        self.device = "cuda" if job.flavor == "cuda-library" and job.device == "cuda" else "cpu"
        self.cuda = self.device == "cuda"
        self.state = JobState()
        self.findings = self.state.findings
        self.libraries = libraries
        self.inputs_path: str | None = None
        self.region_bytes = 0
        self.reveals = Reveals(runner, self.findings, job.rtol, job.atol)

    @property
    def seeds(self) -> list[int]:
        seeds = [s for c in self.job.configs for s in c.seeds]
        return seeds + ([self.job.timing.seed] if self.job.timing else [])

    def run(self) -> EvaluationResult:
        try:
            self.stages()
        except JobFailure as failure:
            return failure_result(failure, self.state, self.device, self.seeds)
        trials = sum(len(c.seeds) for c in self.job.configs)
        self.findings.passed("input-mutation", f"input arrays unchanged after {trials} calls")
        self.findings.passed("result-caching", "new values in the same buffers gave new outputs")
        return final_result(self.state, self.device, self.seeds)

    def stages(self) -> None:
        judged(self.findings, self._stages)

    def _stages(self) -> None:
        with self.state.stage("load"):
            self.load()
        with self.state.stage("correctness"):
            for spec in self.job.configs:
                self.check_config(spec)
        clean = all(c.ok for c in self.state.configs) and not self.findings.any_failed()
        if self.job.timing is not None and clean:
            with self.state.stage("timing"):
                self.time()

    # --- the judge's own side ---------------------------------------------------------------------

    def load(self) -> None:
        job = self.job
        if job.inputs_source:
            path = self.scratch / "inputs.py"
            path.write_text(job.inputs_source)
            self.inputs_path = str(path)
        self.reference_digest = hashlib.sha256(self.libraries["reference"]).hexdigest()[:16]
        reference = self.scratch / f"reference-{self.reference_digest}.so"
        if not reference.exists():  # named by content: never rewrite a library that is loaded
            partial = reference.with_suffix(".partial")
            partial.write_bytes(self.libraries["reference"])
            partial.replace(reference)
        specs = job.configs[0].c_args
        try:
            self.ref_lib, self.ref_fn = load_entry(reference, job.entry, specs)
        except (OSError, AttributeError) as exc:
            raise JobFailure(Verdict.RUNTIME_ERROR, f"the C reference does not load: {exc}") from exc
        self.baseline_fn = None
        if self.cuda and "baseline" in self.libraries and "naive-cuda" in (job.timing.baselines if job.timing else []):
            path = self.scratch / f"naive-{hashlib.sha256(self.libraries['baseline']).hexdigest()[:16]}.so"
            if not path.exists():
                partial = path.with_suffix(".partial")
                partial.write_bytes(self.libraries["baseline"])
                partial.replace(path)
            self.baseline_lib, self.baseline_fn = load_entry(path, job.entry, specs)
        reply = self.runner.request("load", stage="load")
        seconds = reply.load_seconds
        self.state.load_seconds = float(seconds) if isinstance(seconds, int | float) else None

    def host_values(self, spec: ConfigSpec, seed: int) -> dict:
        return self.made_values(spec, seed)[0]

    def answer(self, spec: ConfigSpec, seed: int) -> tuple[dict, dict]:
        """(host values of the seed, the C reference's output arrays on them), cached per seed."""
        values = self.host_values(spec, seed)
        key = (self.reference_digest, self.job.inputs_source, repr(sorted(spec.params.items())), seed)
        if key in _answers:
            _answers.move_to_end(key)
            return values, _answers[key]
        host = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in values.items()}
        self.ref_fn(*[host[a.name].ctypes.data if a.is_array else host[a.name] for a in spec.c_args])
        outputs = {a.name: host[a.name] for a in spec.c_args if a.is_array and a.intent in ("out", "inout")}
        _answers[key] = outputs
        while sum(v.nbytes for d in _answers.values() for v in d.values()) > REFERENCE_CACHE_BYTES and \
                len(_answers) > 1:
            _answers.popitem(last=False)
        return values, outputs

    def ensure_region(self, spec: ConfigSpec, values: dict) -> None:
        """Room for a call's arrays both ways, and for the outputs of the timed calls the judge asks for."""
        arrays = sum(v.nbytes for v in values.values() if isinstance(v, np.ndarray))
        need = max(2, REVEALS_PER_BLOCK) * arrays + 2**20
        if need > self.region_bytes:
            self.runner.ensure_region(need)
            self.region_bytes = need

    # --- correctness ------------------------------------------------------------------------------

    def check_config(self, spec: ConfigSpec) -> None:
        job = self.job
        result = ConfigResult(spec.name, spec.hidden, ok=True, max_abs_error=0.0, max_rel_error=0.0,
                              seeds=list(spec.seeds))
        outputs = [a for a in spec.c_args if a.is_array and a.intent in ("out", "inout")]
        inputs = [a for a in spec.c_args if a.is_array and a.intent == "in"]
        previous_out = previous_ref = None
        previous_ok = True
        for trial, seed in enumerate(spec.seeds):
            values, expected = self.answer(spec, seed)
            self.ensure_region(spec, values)
            stage = f"the entry point on configuration {spec.name!r}"
            reply = self.runner.request("call", stage=stage, config=spec.name, seed=seed, reuse=trial > 0,
                                        want_inputs=True)
            if trial == 0 and spec is job.configs[0] and self.state.load_seconds is not None:
                seconds = reply.seconds
                self.state.load_seconds += float(seconds) if isinstance(seconds, int | float) else 0.0
            got_returned = self.runner.take(reply.outputs, stage)
            inputs_after = self.runner.take(reply.inputs, stage)
            for arg, returned in zip(inputs, inputs_after, strict=False):
                original = torch.from_numpy(values[arg.name])
                if returned.tensor is None or not torch.equal(returned.tensor.cpu(), original):
                    self.findings.failed("input-mutation", f"the candidate changed input array {arg.name!r} on "
                                                           f"configuration {spec.name!r}")
            if len(inputs_after) != len(inputs):
                self.findings.failed("input-mutation", f"the input arrays did not come back on {spec.name!r}")
            got = [r.tensor if r.tensor is not None else r.value for r in got_returned]
            ref = [torch.from_numpy(expected[a.name]).to(self.device) for a in outputs]
            verdict = compare(got, ref, None, job.rtol, job.atol, labels=[a.name for a in outputs])
            for attr in ("max_abs_error", "max_rel_error"):
                if getattr(verdict, attr) is not None:
                    setattr(result, attr, max(getattr(result, attr) or 0.0, getattr(verdict, attr)))
            if not verdict.ok and result.ok:
                result.ok, result.first_mismatch = False, verdict.first_mismatch or None
                result.message = f"trial {trial} (seed {seed}): {verdict.message}"
            if looks_cached(verdict, got, previous_out, ref, previous_ref, previous_ok):
                self.findings.failed("result-caching", f"on configuration {spec.name!r} two calls on different inputs "
                                                       "(same buffers, new values) left identical outputs")
            previous_out, previous_ref, previous_ok = got, ref, verdict.ok
        self.state.configs.append(result)

    # --- timing -----------------------------------------------------------------------------------

    def baseline_fns(self, spec: ConfigSpec, values: dict, drawn: frozenset[str],
                     base_seed: int) -> tuple[dict, dict]:
        """(GPU baselines timed with events, CPU ones timed with the host clock): the naive CUDA port on
        device arrays, the C reference on host ones, each through the same timed calls as the runner's
        (`c_timing.CTimedCalls`: the same placements in the same order, fresh values, poisoned outputs)."""
        gpu, cpu = {}, {}
        if self.baseline_fn is not None:
            gpu["naive-cuda"] = CTimedCalls(self.baseline_fn, spec.c_args, values, drawn, "cuda", base_seed)
        if "c-reference" in self.job.timing.baselines:
            cpu["c-reference"] = CTimedCalls(self.ref_fn, spec.c_args, values, drawn, "cpu", base_seed)
        return gpu, cpu

    def runner_block(self, spec: ConfigSpec, base_seed: int, trials: int, warmup: int,
                     first_call: int) -> clock.Block:
        return clock.runner_block(self.runner, spec.name, base_seed, trials, warmup,
                                  self.job.timing.policy.flush_bytes, first_call)

    def judge_block(self, fns: dict, device: str, trials: int, warmup: int) -> dict[str, clock.Block]:
        return clock.judge_blocks(fns, device, trials, warmup, self.job.timing.policy.flush_bytes)

    def answer_of_call(self, spec: ConfigSpec, values: dict, drawn: frozenset[str], base_seed: int,
                       call: int) -> Answer:
        """The C reference's outputs on the values a timed call saw (its drawn inputs rotated for it), left on the
        host: only the chunks the judge checks move to the candidate's device (`reveal`)."""
        host = {k: (v.copy() if isinstance(v, np.ndarray) else v)
                for k, v in values_of_call(values, drawn, spec.c_args, base_seed, call).items()}
        self.ref_fn(*[host[a.name].ctypes.data if a.is_array else host[a.name] for a in spec.c_args])
        outputs = [a for a in spec.c_args if a.is_array and a.intent in ("out", "inout")]
        return Answer([torch.from_numpy(host[a.name]) for a in outputs], None, [a.name for a in outputs])

    def time(self) -> None:
        spec_t = self.job.timing
        policy = spec_t.policy
        spec = self.job.config(spec_t.config)
        base = spec_t.seed
        values, drawn = self.made_values(spec, base)
        gpu, cpu = self.baseline_fns(spec, values, drawn, base)
        same_clock = gpu if self.cuda else cpu
        flush_us = timing.flush_cost_us(self.device, policy.flush_bytes)
        rtt_us = self.runner.ping() * 1e6
        outputs = [a for a in spec.c_args if a.is_array and a.intent in ("out", "inout")]
        output_bytes = sum(values[a.name].nbytes for a in outputs)
        self.reveals.expect([torch.from_numpy(values[a.name]) for a in outputs], [a.name for a in outputs])
        calls = 0

        def candidate(count: int, warmup: int = 0) -> clock.Block:
            nonlocal calls
            block = self.runner_block(spec, base, count, warmup, calls)
            calls += warmup + count
            self.reveals.check(block, warmup, lambda call: self.answer_of_call(spec, values, drawn, base, call),
                               f"the timed calls on {spec.name!r}")
            return block

        candidate(3, warmup=2)  # warm: the timing's set-up, lazy loads
        self.judge_block(same_clock, self.device, 3, warmup=2)
        calibration = candidate(3)
        base_calibration = self.judge_block(same_clock, self.device, 3, warmup=0)
        trials = clock.planned_trials(policy, clock.clock_us_per_trial(calibration, rtt_us), base_calibration)
        plan = clock.block_plan(trials, policy.target_ci, ring_trials(output_bytes, self.device),
                                policy.min_trials if self.cuda else None)
        self.reveals.plan(clock.reveal_horizon(plan, trials, self.cuda))
        candidate_blocks, baseline_blocks = clock.alternate_blocks(
            plan, candidate, lambda count: self.judge_block(same_clock, self.device, count, warmup=0),
            policy.min_trials, policy.target_ci)
        if self.cuda and cpu:  # beside a GPU candidate the C reference gets a few calls of its own size
            for name, fn in cpu.items():
                first = self.judge_block({name: fn}, "cpu", 1, warmup=0)[name]
                count = reference_calls(first.times_us[0])
                baseline_blocks[name] = [self.judge_block({name: fn}, "cpu", count, warmup=0)[name]]
        self.findings.passed("timed-output", f"{self.reveals.checked} timed calls, chosen after their blocks ran, "
                                             "match their committed digests and the C reference")
        reference_blocks = next(iter(baseline_blocks[n] for n in same_clock), [])
        clock_name = "cuda-events" if self.cuda else "perf-counter"
        work = ("c", self.reference_digest, self.job.entry, spec.name, repr(sorted(spec.params.items())), clock_name)
        verdict = clock.corroborate_work(work, candidate_blocks, reference_blocks, rtt_us, clock_name, flush_us)
        clock.settle(self.state, verdict, verdict.detail)
        result = next(c for c in self.state.configs if c.name == spec.name)
        result.candidate = TimingStats.from_samples([t for b in candidate_blocks for t in b.times_us], clock_name,
                                                    wall_us=verdict.clock_us, unexplained_us=verdict.unexplained_us)
        result.baselines = {}
        for name, blocks in baseline_blocks.items():
            times = [t for b in blocks for t in b.times_us]
            result.baselines[name] = TimingStats.from_samples(
                times, "cuda-events" if name in gpu else "perf-counter",
                wall_us=sum(b.wall_us for b in blocks) / len(times))
        self.state.timed_config, self.state.candidate_us = spec.name, result.candidate.median_us
        baseline = next((n for n in spec_t.baselines if n in result.baselines), None)
        if baseline is not None:
            self.state.baseline_name, self.state.baseline_us = baseline, result.baselines[baseline].median_us
        if spec_t.energy_seconds > 0 and self.cuda:
            with self.state.stage("energy"):
                record_energy(self.state, self.runner, spec.name, [base], gpu.get(baseline), baseline,
                              spec_t.energy_seconds)

    def made_values(self, spec: ConfigSpec, seed: int) -> tuple[dict, frozenset[str]]:
        try:
            return made_inputs(_arg_specs(spec), spec.params, seed, self.inputs_path)
        except Exception as exc:  # noqa: BLE001 - the problem's input rules failed: its fault, said so
            raise JobFailure(Verdict.RUNTIME_ERROR, f"input generation failed on {spec.name!r}: {exc}") from exc
