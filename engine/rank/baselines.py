"""What the ranker must beat: rules a reviewer would use without a model, and the timer itself.

Each baseline turns a pair into P(a better): 1, 0, or 0.5 when it has no opinion (equal or
missing values), which the accuracy metric counts as half right.
- random: always 0.5.
- fewer registers wins / higher occupancy wins: one static feature each.
- measured-speed oracle: on human pairs, the candidate measured faster on a shared device; it
  says how often labelers agree with the stopwatch, the ceiling for a speed-only ranker there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from db.labels import CandidateEvidence
from engine.rank.comparable import measurement_context
from engine.rank.features import first_number
from engine.rank.pairs import PairSet

REGISTER_KEYS = ("registers", "registers_per_thread", "regs")
OCCUPANCY_KEYS = ("occupancy", "theoretical_occupancy", "achieved_occupancy")


def _feature_rule(rows: Sequence[CandidateEvidence], pairs: PairSet, keys: Sequence[str],
                  lower_wins: bool) -> np.ndarray:
    values = np.array([v if (v := first_number(r.features, keys)) is not None else np.nan for r in rows])
    if len(pairs) == 0:
        return np.zeros(0)
    va, vb = values[pairs.a], values[pairs.b]
    a_wins = va < vb if lower_wins else va > vb
    out = np.where(a_wins, 1.0, 0.0)
    out[np.isnan(va) | np.isnan(vb) | (va == vb)] = 0.5
    return out


def fewer_registers(rows: Sequence[CandidateEvidence], pairs: PairSet) -> np.ndarray:
    return _feature_rule(rows, pairs, REGISTER_KEYS, lower_wins=True)


def higher_occupancy(rows: Sequence[CandidateEvidence], pairs: PairSet) -> np.ndarray:
    return _feature_rule(rows, pairs, OCCUPANCY_KEYS, lower_wins=False)


def random_guess(rows: Sequence[CandidateEvidence], pairs: PairSet) -> np.ndarray:
    return np.full(len(pairs), 0.5)


def measured_log_ratio(x: CandidateEvidence, y: CandidateEvidence) -> float | None:
    """Mean log(t_y / t_x) over contexts (device, baseline, configuration) both were timed in (> 0: x
    faster); None if never together."""
    ratios = []
    for mx in x.measurements:
        for my in y.measurements:
            if measurement_context(mx) != measurement_context(my):
                continue  # another device, baseline or configuration: not the same stopwatch
            if mx.candidate_us and my.candidate_us:
                ratios.append(math.log(my.candidate_us / mx.candidate_us))
            elif mx.speedup and my.speedup:
                ratios.append(math.log(mx.speedup / my.speedup))
    return sum(ratios) / len(ratios) if ratios else None


def measured_oracle(rows: Sequence[CandidateEvidence], pairs: PairSet) -> np.ndarray:
    out = np.full(len(pairs), 0.5)
    for k, (i, j) in enumerate(zip(pairs.a, pairs.b, strict=True)):
        ratio = measured_log_ratio(rows[i], rows[j])
        if ratio:
            out[k] = 1.0 if ratio > 0 else 0.0
    return out


BASELINES: dict[str, Callable[[Sequence[CandidateEvidence], PairSet], np.ndarray]] = {
    "random": random_guess,
    "fewer_registers": fewer_registers,
    "higher_occupancy": higher_occupancy,
    "measured_oracle": measured_oracle,
}
