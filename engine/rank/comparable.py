"""When two candidates may be compared at all, and when a measured difference between them is real.

Comparable: the same problem, the same target (what the task asked for: CUDA on a GPU, or C on the CPU
for the CPU form of a C problem), not the same code (sources equal once comments and whitespace are
gone are one candidate: `db.identity`), and, when both are measured, on the same device model against the same
baseline on the same configuration. A pair that fails any of these is never made: not measured, not
in the label queue, not for the ranker, not in an export.

Real: decided from the stored trials, never from two medians. Each run's trials are divided by the
baseline that run measured itself (so a machine that was slower for one run slows both of its sides),
then a two-sided Mann–Whitney U test compares the two candidates at level `ALPHA`, and the medians must
also be `MIN_RATIO` apart. Older evaluations without kept trials fall back to a z-test on the log medians
with each median's standard error from its IQR and trial count; the pair records which test decided.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from db.labels import CandidateEvidence, Measurement

ALPHA = 0.01
MIN_RATIO = 1.10
MIN_SAMPLES = 8


TARGETS = ("cuda", "c-cpu")


def target_for_language(language: str | None) -> str:
    """What a candidate in this language is a solution of: C code runs on the CPU (the CPU form of a C
    problem), everything else (CUDA files, PyTorch modules with their own kernels) is GPU code."""
    return "c-cpu" if language == "c" else "cuda"


def target_of(candidate: CandidateEvidence) -> str:
    return target_for_language(candidate.language)


def measurement_context(m: Measurement) -> tuple[str, str | None, str | None]:
    return (m.device, m.baseline, m.config)


def incomparable_reason(a: CandidateEvidence, b: CandidateEvidence) -> str | None:
    """Why a pair of these two may not be made, in words for the person who tried; None when it may."""
    if a.id == b.id:
        return "a candidate is not compared with itself"
    if a.problem_slug != b.problem_slug:
        return f"different problems ({a.problem_slug}, {b.problem_slug})"
    if target_of(a) != target_of(b):
        return f"different targets ({target_of(a)}, {target_of(b)}): they answer different tasks"
    if a.equivalence and a.equivalence == b.equivalence:
        return "the same code (equal once comments and whitespace are gone)"
    contexts_a = {measurement_context(m) for m in a.measurements}
    contexts_b = {measurement_context(m) for m in b.measurements}
    if contexts_a and contexts_b and not contexts_a & contexts_b:
        return "measured only on different devices, baselines or configurations"
    return None


def comparable(a: CandidateEvidence, b: CandidateEvidence) -> bool:
    """Whether a pair of these two may be made at all (see the module's words)."""
    return incomparable_reason(a, b) is None


@dataclass(frozen=True)
class Difference:
    """A measured difference between two runs: the log ratio (> 0: `a` is faster) and the evidence."""

    log_ratio: float
    test: str
    p_value: float
    real: bool


def _normalised(m: Measurement) -> list[float]:
    scale = m.baseline_us if m.baseline_us else 1.0
    return [t / scale for t in m.samples_us]


def _median_se(m: Measurement) -> float | None:
    """Standard error of the log median from the IQR and trial count (normal approximation)."""
    if not (m.candidate_us and m.iqr_us is not None and m.trials and m.trials >= 2):
        return None
    sigma = m.iqr_us / 1.349
    return 1.2533 * sigma / (m.candidate_us * math.sqrt(m.trials))


def _level(m: Measurement) -> float | None:
    """The median the comparison is made on: time over the run's own baseline, or time alone."""
    if m.candidate_us is None:
        return None
    return m.candidate_us / m.baseline_us if m.baseline_us else m.candidate_us


def difference(a: Measurement, b: Measurement, alpha: float = ALPHA, min_ratio: float = MIN_RATIO
               ) -> Difference | None:
    """Whether `a` and `b` (same context) differ for real; None where neither can be told."""
    level_a, level_b = _level(a), _level(b)
    if not level_a or not level_b:
        return None
    log_ratio = math.log(level_b / level_a)
    big_enough = abs(log_ratio) >= math.log(min_ratio) - 1e-12
    if len(a.samples_us) >= MIN_SAMPLES and len(b.samples_us) >= MIN_SAMPLES:
        from scipy.stats import mannwhitneyu

        p_value = float(mannwhitneyu(_normalised(a), _normalised(b), alternative="two-sided").pvalue)
        return Difference(log_ratio, "mann-whitney-u", p_value, big_enough and p_value < alpha)
    se_a, se_b = _median_se(a), _median_se(b)
    if se_a is None or se_b is None:
        return Difference(log_ratio, "none: no trials kept", 1.0, False)
    z = abs(log_ratio) / math.sqrt(se_a**2 + se_b**2 or 1e-30)
    p_value = math.erfc(z / math.sqrt(2))
    return Difference(log_ratio, "median-z-from-iqr", p_value, big_enough and p_value < alpha)
