"""Energy per call of the candidate and its baseline, read by the judge from NVML's energy counter.

After timing, when the candidate is warm and has passed its checks: the runner runs back-to-back calls
on the timed inputs for `seconds` while the judge reads the device's energy counter around that loop
(the counter is the device's, not the process's, so the candidate cannot touch it); then the judge
runs its own baseline loop the same way. The counter moves in ~100 ms steps, which is why this is a
separate loop and not read around the event-timed trials.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from engine.verify.judge.energy_meter import EnergyRecord, EnergyUnavailable, compare_energy, measure_energy_of_loop
from engine.verify.judge.outcome import JobState


def _local_loop(fn: Callable[[int], object], sync: Callable[[], None]) -> Callable[[float], int]:
    def loop(seconds: float) -> int:
        for i in range(3):
            fn(i)
        sync()
        calls, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            for _ in range(8):
                fn(calls)
                calls += 1
            sync()
        return calls

    return loop


def record_energy(state: JobState, runner, config: str, seeds: list[int], baseline_fn: Callable[[int], object] | None,
                  baseline_name: str | None, seconds: float, sync: Callable[[], None] | None = None) -> None:
    """Store J per call of the candidate (run by the runner) and of the baseline (run here) on the state;
    a missing counter is a note. A candidate fault in the loop propagates as the runner's report."""
    import torch

    sync = sync or torch.cuda.synchronize

    def candidate_loop(loop_seconds: float) -> int:
        reply = runner.request("loop", stage="the energy loop", config=config, seeds=seeds, seconds=loop_seconds)
        calls = reply.calls
        return int(calls) if isinstance(calls, int) and calls > 0 else 0

    try:
        candidate = measure_energy_of_loop(candidate_loop, seconds)
        baseline = comparison = None
        if baseline_fn is not None:
            with torch.no_grad():
                baseline = measure_energy_of_loop(_local_loop(baseline_fn, sync), seconds)
            comparison = compare_energy(candidate, baseline)
        state.energy = EnergyRecord(device=candidate.device, loop_seconds=seconds, candidate=candidate,
                                    calls_reported_by="the candidate's process",
                                    baseline_name=baseline_name if baseline else None, baseline=baseline,
                                    comparison=comparison).to_json()
    except EnergyUnavailable as exc:
        state.notes.append(f"energy not measured: {exc}")
