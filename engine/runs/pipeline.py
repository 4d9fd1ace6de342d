"""What happens to the proposals of one step: verify (sandboxed workers), analyse (static on any
machine; ncu and energy where a GPU is and the candidate ran correctly), place on the roofline,
run the feedback tools, and score the unified reward.

One pipeline lives as long as its run, so the worker pool (one CUDA context per worker) stays warm.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from dataclasses import replace

from engine.analysis import (
    NcuProfile,
    RooflineRecord,
    StaticReport,
    analyse_candidate,
    ncu_record,
    profile_candidate,
    profile_config,
)
from engine.feedback import build_diagnostics, render_feedback, run_tools
from engine.problems.model import Problem
from engine.propose.base import Proposal
from engine.reward.score import no_reward, unified_reward
from engine.schema.verdict import EvaluationResult, Verdict
from engine.settings import Settings, get_settings
from engine.store.outcome import RoundOutcome
from engine.verify.evaluate import Verifier
from engine.verify.judge.energy_meter import EnergyRecord
from engine.verify.prepare import TimingOptions
from engine.verify.scale import make_pool

log = logging.getLogger(__name__)


class RoundPipeline:
    def __init__(self, problem: Problem, gpu: bool) -> None:
        self.problem = problem
        self.gpu = gpu
        self.settings = get_settings()
        self.verifier = Verifier(settings=self.settings)
        self.verifier.pool = make_pool(self.settings)  # local or Ray workers; set after init so close() ends it
        self._device_name: str | None = None
        self.profiling = self.settings.ncu_in_runs

    def set_profiling(self, enabled: bool) -> None:
        """A run's choice: ncu and energy for correct candidates (on a GPU), or neither, for throughput."""
        self.profiling = enabled and self.settings.ncu_in_runs
        if not enabled:
            policy = self.verifier.options.timing_policy or TimingOptions.from_settings(self.settings)
            timing = replace(policy, energy_seconds=0.0)
            self.verifier.options = replace(self.verifier.options, timing_policy=timing)

    @property
    def device_name(self) -> str:
        if self._device_name is None:
            self._device_name = self.verifier.device_name()
        return self._device_name

    def close(self) -> None:
        self.verifier.close()

    def evaluate(self, proposals: list[Proposal]) -> list[RoundOutcome]:
        outcomes = self.evaluate_stream(enumerate(proposals))
        return [outcomes[i] for i in range(len(proposals))]

    def evaluate_stream(self, arrivals: Iterable[tuple[int, Proposal]]) -> dict[int, RoundOutcome]:
        """(sample index, proposal) pairs as the replies arrive → outcomes by sample index. A proposal with no
        code is judged at once (its error and reply kept); the others' builds start as each one arrives and
        their verification once built and a worker is free (`Verifier.evaluate_stream`). Analysis, feedback and
        reward follow once every candidate is verified (ncu must not share the GPU with a timing)."""
        proposals: dict[int, Proposal] = {}
        results: dict[int, EvaluationResult] = {}

        def runnable() -> Iterator[tuple[int, str, str]]:
            for index, proposal in arrivals:
                proposals[index] = proposal
                if proposal.error:
                    results[index] = EvaluationResult(Verdict.PROPOSAL_ERROR, proposal.error, log=proposal.reply or "")
                else:
                    yield index, proposal.source, proposal.language

        results.update(self.verifier.evaluate_stream(self.problem, runnable()))
        return {i: self._outcome(proposals[i], results[i]) for i in sorted(proposals)}

    def _outcome(self, proposal: Proposal, result: EvaluationResult) -> RoundOutcome:
        return outcome_of(self.problem, proposal, result, self.settings, profile=self.gpu and self.profiling)


def _energy_record(result: EvaluationResult) -> EnergyRecord | None:
    """The judge's reading, or the note that says why there is none."""
    if result.energy is not None:
        return EnergyRecord.from_json(result.energy)
    reason = next((n for n in result.notes if n.startswith("energy not measured")), None)
    return EnergyRecord(reason=reason) if reason else None


def _dynamic_profile(problem: Problem, proposal: Proposal, result: EvaluationResult, static: StaticReport | None,
                     settings: Settings) -> tuple[NcuProfile, str | None] | None:
    """ncu for a correct candidate measured on a GPU, and the configuration profiled; None where there
    is nothing to profile."""
    if static is None or result.verdict != Verdict.CORRECT or result.device in (None, "cpu"):
        return None
    config = profile_config(problem, result.timed_config, result.candidate_us)
    try:
        return profile_candidate(problem, proposal.source, proposal.language, static, settings=settings,
                                 config=config), config
    except Exception as exc:  # noqa: BLE001 - profiling is a diagnostic: its failure must not lose the round
        log.warning("ncu profiling failed: %s", exc)
        return NcuProfile(False, f"profiling failed: {type(exc).__name__}: {exc}", [], 0.0, []), config


def _static_at(problem: Problem, proposal: Proposal, static: StaticReport, config: str | None) -> StaticReport:
    """The static report at the profiled configuration (sizes change the estimate), for the comparison."""
    if config is None or config == static.config:
        return static
    try:
        return analyse_candidate(problem, proposal.source, proposal.language, problem.config(config), arch=static.arch)
    except Exception as exc:  # noqa: BLE001 - the comparison is optional: fall back to the stored report
        log.warning("static analysis at %s failed: %s", config, exc)
        return static


CPU_TOOLS = ("correctness",)  # every other tool reads GPU evidence (occupancy, coalescing, the roofline)


def outcome_of(problem: Problem, proposal: Proposal, result: EvaluationResult, settings: Settings,
               arch: str | None = None, profile: bool = False) -> RoundOutcome:
    """Everything a step stores about one proposal, from its verification result: static analysis,
    dynamic profile (`profile`: ncu around a correct candidate on the GPU that measured it),
    diagnostics, feedback and reward.

    A module function rather than a pipeline method so that results measured elsewhere (the GPU
    library check, turned into a shipped recording by `benchmarks/library_recording.py`) become
    exactly the rows a real run stores, with no second copy of this logic. `arch` is the GPU the
    static analysis targets (default: the settings' `gpu_arch`); pass the measured device's.
    """
    static = None
    if not proposal.error and proposal.source.strip():
        try:
            static = analyse_candidate(problem, proposal.source, proposal.language, arch=arch)
        except Exception as exc:  # noqa: BLE001 - a diagnostics failure must not lose the round
            log.warning("static analysis failed: %s", exc)
            result.log = (result.log + f"\n(static analysis failed: {type(exc).__name__}: {exc})").strip()
    on_cpu = proposal.language == "c"  # C code runs on the CPU: only what holds there is said about it
    dynamic = _dynamic_profile(problem, proposal, result, static, settings) if profile and not on_cpu else None
    ncu, ncu_config = dynamic if dynamic is not None else (None, None)
    diagnostics = build_diagnostics(static=static, evaluation=result, problem=problem, profile=ncu, on_cpu=on_cpu)
    findings = run_tools(diagnostics, names=CPU_TOOLS if on_cpu else None) if not proposal.error else []
    feedback = render_feedback(findings, diagnostics) if not proposal.error else ""  # no code: nothing to diagnose
    features = static.features if static is not None else {}
    if proposal.error and proposal.meta.get("endpoint_failure"):
        reward = no_reward()  # the endpoint's failure, not the model's answer
    else:
        reward = unified_reward(str(result.verdict), result.speedup, features, result.own_kernel_share,
                                None, settings.reward, flagged=result.flagged)
    roofline = None
    if diagnostics.roofline is not None or diagnostics.classification is not None:
        placed_at = ncu_config if diagnostics.roofline is not None and diagnostics.roofline.source == "ncu" \
            else result.timed_config
        roofline = RooflineRecord(diagnostics.roofline, diagnostics.classification,
                                  diagnostics.device.name if diagnostics.device else None, list(diagnostics.notes),
                                  placed_at if diagnostics.roofline is not None else None)
    bottleneck = str(diagnostics.bottleneck) if diagnostics.bottleneck else None
    profiled = None
    if ncu is not None:
        compared = _static_at(problem, proposal, static, ncu_config) if ncu.ok else None
        profiled = ncu_record(ncu, ncu_config, compared)
    return RoundOutcome(result=result, reward=reward, static=static, roofline=roofline, ncu=profiled,
                        energy=_energy_record(result), feedback_text=feedback, findings=[f.tool for f in findings],
                        finding_details=list(findings), bottleneck=bottleneck)
