"""When two candidates may be compared at all, and when a measured difference between them is real.

Comparable: the same problem, the same target (what the task asked for: CUDA on a GPU, or C on the CPU
for the CPU form of a C problem), not the same code (sources equal once comments and whitespace are
gone are one candidate: `db.identity`), and, when both are measured, on the same device model against the same
baseline on the same configuration. A pair that fails any of these is never made: not measured, not
in the label queue, not for the ranker, not in an export.

Real: decided on what holds across evaluations, never on the trials of one run (which only say how
well that run's median is known): `engine.rank.pooled` pools identical code and judges a difference of
at least `MIN_RATIO` against the spread between evaluations at level `ALPHA`.
"""

from __future__ import annotations

from db.labels import CandidateEvidence, Measurement

ALPHA = 0.01
MIN_RATIO = 1.10


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
