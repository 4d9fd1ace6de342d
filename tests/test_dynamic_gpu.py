"""On the GPU: a run's dynamic diagnostics. A correct candidate's round carries ncu's metrics
(measured through `run_once` in the workers' walls, within the time budget) and NVML energy per
call beside its baseline's; a candidate that faults under the profiler costs a reason, not the
engine. Prints the figures (run with -s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.analysis.profile.dynamic import profile_candidate
from engine.analysis.static import analyse_candidate
from engine.problems import get_problem
from engine.propose.base import Proposal
from engine.runs.pipeline import outcome_of
from engine.schema.verdict import Verdict
from engine.verify.evaluate import VerifyOptions
from engine.verify.judge.energy_meter import EnergyRecord
from engine.verify.prepare import TimingOptions
from engine.wire.policy import TrialPolicy
from tests.verify_support import verifier_in_fresh_home

pytestmark = pytest.mark.gpu

CHEATS = Path(__file__).parent / "cheats"
ENERGY_SECONDS = 0.5
OPTIONS = VerifyOptions(timing_policy=TimingOptions(TrialPolicy(min_trials=10, min_seconds=0.2, max_trials=300,
                                                                max_seconds=3.0), energy_seconds=ENERGY_SECONDS),
                        timeout_s=300)


@pytest.fixture(scope="module")
def verifier(tmp_path_factory):
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), OPTIONS, pool_timeout_s=300) as verifier:
        yield verifier


def _round(verifier, problem, source: str, language: str):
    result = verifier.evaluate(problem, source, language)
    assert result.verdict == Verdict.CORRECT, result.message
    proposal = Proposal(source, language, "human", "test")
    return result, outcome_of(problem, proposal, result, verifier.settings, profile=True)


def _print_energy(label: str, energy: EnergyRecord) -> None:
    side = energy.candidate
    line = f"{label}: {side.joules_per_call * 1e3:.3f} mJ/call at {side.average_watts:.0f} W ({side.calls} calls)"
    if energy.baseline is not None:
        comparison = energy.comparison
        line += (f"; {energy.baseline_name} {energy.baseline.joules_per_call * 1e3:.3f} mJ/call; ratio "
                 f"{comparison.ratio:.2f}, at matched speed {comparison.matched_speed_ratio:.2f}")
    print(f"\n{line}")


def test_a_correct_python_round_carries_ncu_metrics_and_energy(verifier):
    problem = get_problem("relu")
    result, outcome = _round(verifier, problem, (CHEATS / "gpu_honest.py").read_text(), "python")
    ncu = outcome.ncu
    assert ncu.ok, ncu
    summary = ncu.summary
    print(f"\nrelu honest: ncu {ncu.seconds:.1f} s on {ncu.config!r}; ld {summary.ld_sectors_per_request:.2f} "
          f"st {summary.st_sectors_per_request:.2f} sectors/request; DRAM {summary.dram_bytes_read / 1e6:.1f} "
          f"MB read; roofline from {outcome.roofline.point.source}")
    assert summary.ld_sectors_per_request == pytest.approx(4.0, abs=1.0)  # float loads, consecutive threads
    assert summary.kernels >= 1 and ncu.seconds <= verifier.settings.ncu_budget_s
    assert outcome.roofline.point.source == "ncu"
    energy = outcome.energy
    _print_energy("relu honest", energy)
    assert energy.candidate.joules_per_call > 0 and energy.candidate.seconds >= ENERGY_SECONDS
    assert energy.baseline_name == "eager" and energy.comparison.ratio > 0


def test_a_correct_c_round_carries_ncu_metrics_and_energy_against_the_naive_kernel(verifier):
    problem = get_problem("matrix-transpose")
    impl = problem.implementation("coalesced")
    result, outcome = _round(verifier, problem, impl.source, impl.language)
    assert outcome.ncu.ok, outcome.ncu
    kernels = outcome.ncu.summary.per_kernel
    assert any(name.startswith("transpose_tiled") for name in kernels), kernels
    energy = outcome.energy
    _print_energy("matrix-transpose coalesced", energy)
    assert energy.baseline_name == "naive-cuda" and energy.baseline.joules_per_call > 0


def test_a_candidate_that_faults_under_ncu_is_a_reason_and_the_next_profile_works(verifier):
    problem = get_problem("relu")
    bad = (CHEATS / "gpu_illegal_address.py").read_text()
    profile = profile_candidate(problem, bad, "python", analyse_candidate(problem, bad, "python"),
                                settings=verifier.settings)
    print(f"\nillegal address under ncu: {profile.reason[:200]}")
    assert not profile.ok and profile.reason
    good = (CHEATS / "gpu_honest.py").read_text()
    again = profile_candidate(problem, good, "python", analyse_candidate(problem, good, "python"),
                              settings=verifier.settings)
    assert again.ok, again.reason
