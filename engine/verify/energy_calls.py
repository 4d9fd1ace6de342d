"""Energy per call of the callables the timing loop just measured, from NVML's energy counter.

Runs in the worker after timing, when the candidate is warm and has passed its checks: the
candidate and the baseline its speedup is against, each over `seconds` of back-to-back calls on
the timed configuration's inputs, so the per-call and matched-speed comparisons are on the same
work. The counter moves in ~100 ms steps, which is why this is a separate loop and not read
around the event-timed trials (each of those is microseconds to milliseconds).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import asdict

from engine.analysis.energy import EnergyMeasurement, EnergyUnavailable, compare_energy, measure_energy
from engine.verify.outcome import JobState, failure_from


def _side(measurement: EnergyMeasurement) -> dict:
    data = asdict(measurement)
    data.pop("device")
    return data


def energy_record(fns: dict[str, Callable[[int], object]], baseline: str | None, seconds: float) -> dict:
    """J per call of the candidate and of `baseline` (one of `fns`, if any); raises EnergyUnavailable."""
    trial = itertools.count()
    candidate = measure_energy(lambda: fns["candidate"](next(trial)), min_seconds=seconds)
    record = {"device": candidate.device, "loop_seconds": seconds, "candidate": _side(candidate)}
    if baseline is not None:
        measured = measure_energy(lambda: fns[baseline](next(trial)), min_seconds=seconds)
        record.update(baseline_name=baseline, baseline=_side(measured),
                      comparison=asdict(compare_energy(candidate, measured)))
    return record


def record_energy(state: JobState, fns: dict[str, Callable[[int], object]], baselines: list[str],
                  seconds: float) -> None:
    """Store the energy record on the job's state; a missing counter is a note, a candidate fault a failure."""
    if seconds <= 0:
        return
    baseline = next((name for name in baselines if name in fns), None)
    try:
        state.energy = energy_record(fns, baseline, seconds)
    except EnergyUnavailable as exc:
        state.notes.append(f"energy not measured: {exc}")
    except (Exception, SystemExit) as exc:
        failure = failure_from(exc, "the energy loop")
        state.fatal = state.fatal or failure.fatal
        raise failure from exc
