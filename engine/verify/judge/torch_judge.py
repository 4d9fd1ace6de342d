"""Judging a PyTorch problem's candidate: the judge holds the reference and the verdict, the runner only
turns the inputs of a seed into outputs.

Per configuration and trial: the judge sends a seed it drew (never known to the candidate before), the
runner makes the inputs from it (later trials write the new values into the previous trial's tensors,
so a cache keyed on pointers or shapes returns stale data) and calls `ModelNew`; the judge compares
what comes back with its own float64 reference on the same inputs, checks the runner's inputs after
the call against its own copy, and two trials' outputs against each other. Then one profiled call
(whose kernels did the work), then timing in blocks, alternating with the judge's own baseline blocks
and checked against the judge's clock, and the outputs of the timed calls themselves checked too.
"""

from __future__ import annotations

import torch

from engine.schema.verdict import ConfigResult, EvaluationResult, TimingStats, Verdict
from engine.verify.judge import clock, coverage, replay
from engine.verify.judge.correctness import compare, looks_cached
from engine.verify.judge.energy import record_energy
from engine.verify.judge.job import ConfigSpec, Job
from engine.verify.judge.outcome import Findings, JobFailure, JobState, failure_result, final_result, judged
from engine.verify.judge.reference import Expected, ReferenceFailure, TorchReference
from engine.verify.judge.reveal import Answer, Reveals
from engine.verify.judge.session import CandidateError, Returned, RunnerLost, RunnerMisbehaved, RunnerSession
from engine.wire import timing
from engine.wire.fresh import FreshCalls, ring_trials, trial_seed
from engine.wire.inputs import as_list, reuse_buffers
from engine.wire.profiling import profile_call

TF32_FLAGS = ("allow_tf32", "float32_matmul_precision")
PLAIN_TENSOR_CLASSES = ("Tensor", "Parameter")
CALIBRATION_TRIALS = 3
# A passing check that rests on the candidate's process's own report (its profile, its inputs after a call):
# evidence that can fail a candidate, never proof that clears one, and said so where it is shown
REPORTED = " (as the candidate's process reported it: evidence, not proof)"


def _bytes(values: list) -> int:
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _as_compared(returned: list[Returned]) -> list:
    """What `compare` takes: the tensor, or the plain value (which it names as the wrong type)."""
    return [r.tensor if r.tensor is not None else r.value for r in returned]


class TorchJudge:
    def __init__(self, job: Job, runner: RunnerSession, reference: TorchReference) -> None:
        self.job, self.runner, self.reference = job, runner, reference
        self.device = job.device
        self.cuda = job.device == "cuda"
        self.state = JobState()
        self.findings: Findings = self.state.findings
        self.region_bytes = 0
        self.share_rule: tuple[bool, str] | None = None  # (passed, detail) of the GPU-time share, where it decides
        self.dependence_shown = False  # the answer was seen to depend on the candidate's own launches
        self.echoes: list[replay.Echo | None] = []  # per correct correctness call: how near the reference's rounding
        self.reveals = Reveals(runner, self.findings, job.rtol, job.atol)

    @property
    def seeds(self) -> list[int]:
        seeds = [self.job.init_seed] + [s for c in self.job.configs for s in c.seeds]
        return seeds + ([self.job.timing.seed] if self.job.timing else [])

    def run(self) -> EvaluationResult:
        self.state.notes.append(self.semantics_note())
        try:
            self.stages()
        except JobFailure as failure:
            self.note_evidence()
            return failure_result(failure, self.state, self.device, self.seeds)
        self.note_evidence()
        self.mark_passed()
        self.flag_replay()
        return final_result(self.state, self.device, self.seeds)

    def flag_replay(self) -> None:
        """Flag outputs that carry the reference's own rounding (`replay`): seen by the judge itself, so it holds
        whatever the candidate's process reported of the ops it ran. Not where the problem allows the
        reference's ops, nor where the reference does not accumulate."""
        if not self.echoes or self.dependence_shown:
            return
        reason = replay.replay_flag(self.echoes)
        if reason is None:
            return
        ops = self.reference_profile(self.timed_spec(), self.profile_seed).ops  # the profile stage's, cached
        if replay.accumulates(ops):
            self.state.flag_reason = reason

    def semantics_note(self) -> str:
        """How this verdict relates to KernelBench's: what is the same, and where it is stricter."""
        hidden = sum(c.hidden for c in self.job.configs)
        same = ("Run as KernelBench runs it: Model and ModelNew built from get_init_inputs() under the same seed, "
                "in training mode, called under no_grad")
        if self.reference.reseed:
            same += ", the same seed before every call (the reference draws random numbers)"
        reference = ("its own precision (it draws random numbers)" if self.reference.reseed
                     else "a float64 reference where the model allows")
        timed = f", timed on {self.job.timing.config!r}" if self.job.timing else ""
        return (f"{same}{timed}. Stricter: {len(self.job.configs)} configurations ({hidden} hidden) instead of the "
                f"one written, outputs against {reference} within rtol {self.job.rtol:g} / atol {self.job.atol:g}, "
                "runtime integrity checks.")

    def stages(self) -> None:
        try:
            judged(self.findings, self._stages)
        except ReferenceFailure as exc:  # the problem's own code failed: said so, not the candidate's fault
            raise JobFailure(Verdict.RUNTIME_ERROR, str(exc)) from exc

    def _stages(self) -> None:
        with self.state.stage("load"):
            self.load()
        with self.state.stage("correctness"):
            for spec in self.job.configs:
                self.check_config(spec)
        clean = all(c.ok for c in self.state.configs) and not self.findings.any_failed()
        if self.job.profile and clean:
            with self.state.stage("profile"):
                self.profile()
        if self.job.timing is not None and clean and not self.findings.any_failed():
            with self.state.stage("timing"):
                self.time()
        if self.share_rule is not None and not self.findings.any_failed():
            with self.state.stage("coverage"):  # last: a call without its own kernels may leave the process broken
                self.dependence()

    # --- stages -------------------------------------------------------------------------------------

    def load(self) -> None:
        reply = self.runner.request("load", stage="import")
        self.state.load_seconds = _seconds(reply.load_seconds)

    def ensure_region(self, expected: Expected) -> None:
        """Room for the outputs (twice, so a candidate whose outputs are a little off in size still gets
        them back to be named as wrong)."""
        need = 2 * _bytes(expected.native) + 2**20
        if need > self.region_bytes:
            self.runner.ensure_region(need, on_device=self.cuda and self.job.gpu_region)
            self.region_bytes = need

    def check_config(self, spec: ConfigSpec) -> None:
        job = self.job
        self.runner.request("construct", stage=f"ModelNew() on {spec.name!r}", config=spec.name,
                            init_seed=job.init_seed)
        result = ConfigResult(spec.name, spec.hidden, ok=True, max_abs_error=0.0, max_rel_error=0.0,
                              seeds=list(spec.seeds))
        previous_out = previous_ref = None
        previous_ok = True
        stage_of = self.state.stage
        for trial, seed in enumerate(spec.seeds):
            with stage_of("correctness.reference"):
                expected = self.reference.answer(spec.name, spec.params, seed)
            with stage_of("correctness.region"):
                self.ensure_region(expected)
            stage = f"forward on configuration {spec.name!r}"
            with stage_of("correctness.call"):
                reply = self.runner.request("call", stage=stage, config=spec.name, seed=seed, reuse=trial > 0,
                                            check_inputs=not expected.mutates)
            if self.state.load_seconds is not None and trial == 0 and spec is job.configs[0]:
                self.state.load_seconds += _seconds(reply.seconds)
            with stage_of("correctness.take"):
                outputs = self.runner.take(reply.outputs, stage)
            self.check_classes(outputs, stage)
            got = _as_compared(outputs)
            with stage_of("correctness.compare"):
                verdict = compare(got, expected.answer, expected.native, job.rtol, job.atol,
                                  magnitude=expected.magnitude)
                if verdict.ok and not job.allowed_torch_ops:  # where the reference's ops are allowed, no flag
                    self.echoes.append(replay.echo(got, expected.native, expected.float64))
            for attr in ("max_abs_error", "max_rel_error"):
                if getattr(verdict, attr) is not None:
                    setattr(result, attr, max(getattr(result, attr) or 0.0, getattr(verdict, attr)))
            if not verdict.ok and result.ok:
                result.ok, result.first_mismatch = False, verdict.first_mismatch
                result.message = f"trial {trial} (seed {seed}): {verdict.message}"
            changed = reply.inputs_changed
            if not isinstance(changed, list):
                raise JobFailure(Verdict.INTEGRITY_VIOLATION, "the candidate's process did not say whether "
                                                              "ModelNew.forward changed its inputs")
            if not expected.mutates and changed:
                self.findings.failed("input-mutation", f"ModelNew.forward changed its inputs on configuration "
                                                       f"{spec.name!r} (trial {trial}; input "
                                                       f"{', '.join(map(str, changed[:5]))})")
            if looks_cached(verdict, got, previous_out, expected.native, previous_ref, previous_ok):
                self.findings.failed("result-caching", f"on configuration {spec.name!r} two calls on different "
                                                       "inputs (same tensors, new values) returned identical outputs")
            previous_out, previous_ref, previous_ok = got, expected.native, verdict.ok
        self.state.configs.append(result)

    def check_classes(self, outputs: list[Returned], stage: str) -> None:
        odd = [r.tensor_class for r in outputs if r.tensor is not None and r.tensor_class not in PLAIN_TENSOR_CLASSES]
        if odd:
            self.findings.failed("tensor-subclass", f"during {stage}: returned {', '.join(odd)} instead of a plain "
                                                    "tensor (work deferred past the timed call)")

    def profile(self) -> None:
        """One profiled call: on a GPU, whose kernels did the work; on a CPU, which ops were called."""
        spec = self.timed_spec()
        seed = self.profile_seed
        reply = self.runner.request("profile", stage=f"profiled forward on {spec.name!r}", config=spec.name,
                                    seed=seed)
        claims = reply.profile.model_dump()
        if not isinstance(claims, dict):
            raise JobFailure(Verdict.INTEGRITY_VIOLATION, "the candidate's process sent no profile")
        ops = set(map(str, claims.get("ops", []))) if isinstance(claims.get("ops", []), list) else set()
        reference = self.reference_profile(spec, seed)
        heavy = coverage.heavy_ops(reference.top_ops, self.job.allowed_torch_ops)
        blocked = sorted(heavy & ops)
        if self.cuda:
            self.kernel_share(claims, blocked, sum(t for _, t in reference.kernels.values()), replayed=heavy <= ops)
        else:
            if blocked:
                self.findings.failed("torch-op", f"ModelNew called the reference's own torch ops {', '.join(blocked)} "
                                                 "(not allowed by this problem; on a CPU no GPU time tells whose work "
                                                 "it is)")
            else:
                self.findings.passed("torch-op", f"none of the reference's ops called ({len(ops)} ops seen){REPORTED}")

    @property
    def profile_seed(self) -> int:
        return (self.job.timing.seed if self.job.timing else self.job.init_seed) + 1000

    def reference_profile(self, spec: ConfigSpec, seed: int):
        """The reference's own call profiled by the judge: which ops its forward calls, its GPU time (once
        per configuration: the judge keeps it for the problem's next candidates)."""
        if spec.name not in self.reference.profiles:
            native, _ = self.reference.model(spec.name, spec.params)
            inputs = self.reference.inputs(spec.name, spec.params, seed)
            with torch.no_grad():
                native(*inputs)  # warm: the first call's lazy loads are not the reference's work
                self.reference.profiles[spec.name] = profile_call(lambda: native(*inputs), self.cuda)
        return self.reference.profiles[spec.name]

    def kernel_share(self, claims: dict, blocked: list[str], reference_us: float, replayed: bool = False) -> None:
        kernels = claims.get("kernels", {})
        if not isinstance(kernels, dict):
            raise JobFailure(Verdict.INTEGRITY_VIOLATION, "the candidate's process sent a malformed profile")
        try:
            self.state.kernels = coverage.kernel_launches(kernels, self.job.own_kernels)
        except (TypeError, ValueError, IndexError) as exc:
            raise JobFailure(Verdict.INTEGRITY_VIOLATION, f"the candidate's process sent a malformed profile: "
                                                          f"{exc}") from exc
        own = [k for k in self.state.kernels if k.own]
        share = sum(k.share for k in own)
        foreign_us = sum(k.total_us for k in self.state.kernels if not k.own)
        # The share decides only where the judge's own test of what the answer depends on cannot (`dependence`:
        # no own launch went through the runner's wrappers); otherwise it is shown beside the speedup.
        if not own:
            names = ", ".join(self.job.own_kernels) or "none found in the source"
            ran = ", ".join(k.name for k in self.state.kernels[:3]) or "nothing"
            self.share_rule = (False, f"none of the candidate's own kernels ({names}) ran; GPU work came from {ran}")
        elif not self.job.allowed_torch_ops and share < coverage.MIN_OWN_SHARE:
            self.share_rule = (False, f"the candidate's own kernels are {share:.0%} of its GPU time (at least "
                                      f"{coverage.MIN_OWN_SHARE:.0%} required where its answer's dependence on them "
                                      "could not be tested)")
        else:
            self.share_rule = (True, f"own kernels {share:.0%} of GPU time{REPORTED}")
        self.state.notes.append(f"own kernels {share:.0%} of the candidate's GPU time, libraries and torch "
                                f"{1 - share:.0%}{REPORTED}")
        # Leaving part of the reference's computation (its GEMM, its convolution) to the library is legitimate;
        # calling every one of its ops, with kernels not its own doing most of the reference's GPU work, is the
        # reference replayed, whatever kernel of its own is launched beside it (a copy the answer passes through).
        if blocked and replayed and reference_us > 0 and foreign_us >= coverage.MAX_REFERENCE_WORK * reference_us:
            self.findings.failed("torch-op", f"ModelNew called every one of the reference's own ops "
                                             f"({', '.join(blocked)}), and kernels not its own ran {foreign_us:.1f} µs "
                                             f"against the reference's {reference_us:.1f} µs: the reference replayed")
        elif blocked:
            self.findings.passed("torch-op", f"the reference's ops {', '.join(blocked)} for part of the work (kernels "
                                             f"not its own ran {foreign_us:.1f} µs of the reference's "
                                             f"{reference_us:.1f}; its own kernels do the rest){REPORTED}")
        else:
            self.findings.passed("torch-op", f"none of the reference's ops called{REPORTED}")

    def dependence(self) -> None:
        """`kernel-coverage` from what the answer depends on: one call, on inputs the judge drew, with the
        candidate's own launches skipped (`runner.knockout`). Still correct: its own code does nothing the answer
        needs (decoration beside the reference's or a library's ops). Wrong, or failed: it does, whatever
        share of the GPU time it is (a library GEMM with a fused epilogue of its own passes). Where no own
        launch went through the wrappers, the GPU-time share decides as before."""
        spec = self.timed_spec()
        seed = self.reveals.random.randrange(2**62)
        stage = f"forward on {spec.name!r} with the candidate's own kernels skipped"
        expected = self.reference.answer(spec.name, spec.params, seed, keep=False)
        try:
            reply = self.runner.request("knockout", stage=stage, config=spec.name, seed=seed)
            outputs = self.runner.take(reply.outputs, stage)
        except (CandidateError, RunnerLost, RunnerMisbehaved) as exc:
            self.dependence_shown = True
            self.findings.passed("kernel-coverage", f"the answer depends on its own kernels: without them the call "
                                                    f"failed ({str(exc)[:120]})")
            return
        if reply.skipped == 0:
            passed, detail = self.share_rule
            (self.findings.passed if passed else self.findings.failed)("kernel-coverage", detail)
            return
        verdict = compare(_as_compared(outputs), expected.answer, expected.native, self.job.rtol, self.job.atol,
                          magnitude=expected.magnitude)
        if verdict.ok:
            self.findings.failed("kernel-coverage", f"with its own {reply.skipped} kernel launches skipped the answer "
                                                    "is still correct: it depends on no work of its own")
            return
        self.dependence_shown = True
        self.findings.passed("kernel-coverage", f"the answer depends on its own kernels: with their {reply.skipped} "
                                                f"launches skipped it is wrong ({verdict.message[:100]})")

    # --- timing -------------------------------------------------------------------------------------

    def timed_spec(self) -> ConfigSpec:
        name = self.job.timing.config if self.job.timing else self.job.configs[0].name
        return self.job.config(name)

    def baselines(self, spec: ConfigSpec, base_seed: int) -> dict[str, FreshCalls]:
        """The baselines' timed calls, through the same untimed steps as the candidate's (fresh values of
        every call's own seed, seeded before the call where the model draws random numbers, outputs kept)."""
        native, _ = self.reference.model(spec.name, spec.params)

        def fresh(model) -> FreshCalls:
            return FreshCalls(lambda seed: self.reference.inputs(spec.name, spec.params, seed),
                              lambda inputs: as_list(model(*inputs)), base_seed, reuse_buffers,
                              reseed=self.reference.reseed)

        fns = {}
        for name in self.job.timing.baselines:
            if name == "eager":
                fns["eager"] = fresh(native)
            elif name == "compile":
                try:
                    compiled = torch.compile(native)
                    calls = fresh(compiled)
                    with torch.no_grad():
                        compiled(*calls.inputs)
                    fns["compile"] = calls
                except Exception as exc:  # noqa: BLE001 - a baseline that cannot compile is a note, not a failure
                    self.state.notes.append(f"torch.compile baseline unavailable: {type(exc).__name__}: {exc}")
        return fns

    def expected_of_call(self, spec: ConfigSpec, base_seed: int, call: int) -> Answer:
        expected = self.reference.answer(spec.name, spec.params, trial_seed(base_seed, call), keep=False)
        return Answer(expected.answer, expected.native, magnitude=expected.magnitude)

    def runner_block(self, spec: ConfigSpec, base_seed: int, trials: int, warmup: int,
                     first_call: int) -> clock.Block:
        return clock.runner_block(self.runner, spec.name, base_seed, trials, warmup,
                                  self.job.timing.policy.flush_bytes, first_call)

    def judge_block(self, fns: dict, trials: int, warmup: int) -> dict[str, clock.Block]:
        with torch.no_grad():
            return clock.judge_blocks(fns, self.device, trials, warmup, self.job.timing.policy.flush_bytes)

    def time(self) -> None:
        """The headline timing on the timed configuration, then the others asked for (shown beside it; the
        speedup and reward stay those of the timed configuration)."""
        spec_t = self.job.timing
        self.time_config(self.job.config(spec_t.config), headline=True)
        for name in spec_t.also:
            if name != spec_t.config and any(c.name == name for c in self.job.configs):
                self.time_config(self.job.config(name), headline=False)
        self.findings.passed("timed-output", f"{self.reveals.checked} timed calls, chosen after their blocks ran, "
                                             "match their committed digests and the judge's answers")

    def time_config(self, spec: ConfigSpec, headline: bool) -> None:
        spec_t = self.job.timing
        policy = spec_t.policy
        base = spec_t.seed
        first = self.reference.answer(spec.name, spec.params, trial_seed(base, 0))
        self.ensure_region(first)
        self.reveals.expect(first.native)  # the chunk layout of the timed calls' outputs
        fns = self.baselines(spec, base)
        flush_us = timing.flush_cost_us(self.device, policy.flush_bytes)
        rtt_us = self.runner.ping() * 1e6
        calls = 0

        def candidate(count: int, warmup: int = 0) -> clock.Block:
            nonlocal calls
            with self.state.stage("timing.candidate"):
                block = self.runner_block(spec, base, count, warmup, calls)
            calls += warmup + count
            with self.state.stage("timing.reveal"):
                self.reveals.check(block, warmup, lambda call: self.expected_of_call(spec, base, call),
                                   f"the timed calls on {spec.name!r}")
            return block

        def baseline(count: int, warmup: int = 0) -> dict[str, clock.Block]:
            with self.state.stage("timing.baseline"):
                return self.judge_block(fns, count, warmup=warmup)

        candidate(CALIBRATION_TRIALS, warmup=2)  # warm: lazy loads, allocator growth, the timing's set-up
        baseline(CALIBRATION_TRIALS, warmup=2)
        calibration = candidate(CALIBRATION_TRIALS)
        base_calibration = baseline(CALIBRATION_TRIALS)
        trials = clock.planned_trials(policy, clock.clock_us_per_trial(calibration, rtt_us), base_calibration)
        most = ring_trials(_bytes(first.native), self.device)
        plan = clock.block_plan(trials, policy.target_ci, most, policy.min_trials if self.cuda else None)
        self.reveals.plan(clock.reveal_horizon(plan, trials, self.cuda))
        candidate_blocks, baseline_blocks = clock.alternate_blocks(plan, candidate, baseline, policy.min_trials,
                                                                   policy.target_ci)
        reference_blocks = baseline_blocks.get("eager") or next(iter(baseline_blocks.values()), [])
        clock_name = "cuda-events" if self.cuda else "perf-counter"
        work = ("pytorch", self.reference.key, spec.name, repr(sorted(spec.params.items())), clock_name)
        verdict = clock.corroborate_work(work, candidate_blocks, reference_blocks, rtt_us, clock_name, flush_us)
        detail = verdict.detail if headline else f"on {spec.name!r}: {verdict.detail}"
        clock.settle(self.state, verdict, detail)
        result = next(c for c in self.state.configs if c.name == spec.name)
        result.candidate = TimingStats.from_samples([t for b in candidate_blocks for t in b.times_us], clock_name,
                                                    wall_us=verdict.clock_us, unexplained_us=verdict.unexplained_us)
        result.baselines = {}
        for name, blocks in baseline_blocks.items():
            times = [t for b in blocks for t in b.times_us]
            wall = sum(b.wall_us for b in blocks) / len(times)
            result.baselines[name] = TimingStats.from_samples(times, clock_name, wall_us=wall)
        if not headline:
            return
        self.state.timed_config = spec.name
        self.state.candidate_us = result.candidate.median_us
        baseline = next((n for n in spec_t.baselines if n in result.baselines), None)
        if baseline is not None:
            self.state.baseline_name, self.state.baseline_us = baseline, result.baselines[baseline].median_us
        if spec_t.energy_seconds > 0 and self.cuda:
            with self.state.stage("energy"):
                record_energy(self.state, self.runner, spec.name, [base], fns.get(baseline), baseline,
                              spec_t.energy_seconds)

    # --- evidence -----------------------------------------------------------------------------------

    def note_evidence(self) -> None:
        """What the runner reported about the candidate's own behaviour (patches, threads, processes):
        self-reports against itself, so believed; their absence proves nothing. And what the judge's own side
        of the conversation noted (`RunnerSession.notes`)."""
        self.state.notes.extend(n for n in self.runner.notes if n not in self.state.notes)
        patched = [e for e in self.runner.evidence if e.startswith("replaced ")]
        flags = [e for e in self.runner.evidence if e.startswith("changed ") and "environment" not in e]
        if flags and self.job.dtype == "tf32" and all(any(t in f for t in TF32_FLAGS) for f in flags):
            flags = []
        threads = [e for e in self.runner.evidence if e.startswith("started thread")]
        reached = [e for e in self.runner.evidence if e.startswith(("network access", "opened "))]
        if reached:
            self.findings.failed("sandbox-access", "; ".join(reached[:5]))
        if patched:
            self.findings.failed("monkeypatch", "; ".join(patched[:5]))
        if flags:
            self.findings.failed("precision-flags", "; ".join(flags[:5]))
        if threads:
            self.findings.failed("threads", "; ".join(threads[:5]))
        other = [e for e in self.runner.evidence if e not in (*patched, *flags, *threads, *reached)]
        if other:
            tried = "; ".join(other[:5])
            self.state.notes.append(f"the candidate tried (the sandbox refused or contained it): {tried}")

    def mark_passed(self) -> None:
        trials = sum(len(c.seeds) for c in self.job.configs)
        self.findings.passed("input-mutation", f"inputs unchanged after {trials} calls{REPORTED}; every call gets "
                                               "fresh values, so a change could not carry into a later one")
        if any(len(c.seeds) > 1 for c in self.job.configs):
            self.findings.passed("result-caching", "new values in the same tensors gave new outputs")
        for check in ("monkeypatch", "precision-flags", "threads", "tensor-subclass", "sandbox-access"):
            self.findings.passed(check)


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and value == value and 0 <= value < 1e6 else None
