"""Timing: per-trial CUDA events on the stream the work runs on, an L2 flush before every trial,
warm-up, adaptive trial counts, median and IQR, and a device-synchronised wall-clock cross-check.

Candidate and baselines are timed interleaved (one trial of each per round, order rotating), so
clock and thermal drift hit them equally. Everything used to measure is bound at import, before
candidate code exists in the process, so a monkeypatch cannot reach it. On a machine without a
GPU the same loop runs with the host clock (C candidates against the C reference).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from engine.verify.records import TimingStats

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize
_event_record = torch.cuda.Event.record
_event_elapsed = torch.cuda.Event.elapsed_time

SYNC_EVERY = 10  # rounds between host syncs: keeps the host's elapsed time honest about the GPU's
CPU_FLUSH_BYTES = 32 * 2**20
WALL_BUDGET_S = 0.25
# wall > 2.5 × max(events, host issue time) + 100 µs: the events missed the work
ESCAPE_RATIO, ESCAPE_MARGIN_US = 2.5, 100.0


@dataclass(frozen=True)
class TrialPolicy:
    """Stop when `min_trials` and `min_seconds` are both reached, or at `max_trials`, or at `max_seconds`."""

    min_trials: int = 30
    min_seconds: float = 1.0
    max_trials: int = 1000
    max_seconds: float = 10.0
    floor_trials: int = 3  # even a slow kernel gets this many before max_seconds stops it

    def done(self, trials: int, elapsed: float) -> bool:
        if trials >= self.max_trials:
            return True
        if trials >= self.min_trials and elapsed >= self.min_seconds:
            return True
        return elapsed >= self.max_seconds and trials >= self.floor_trials


def _stats(times_us: list[float], wall: tuple[float, float] | None, clock: str) -> TimingStats:
    ordered = sorted(times_us)
    if len(ordered) >= 4:
        q = statistics.quantiles(ordered, n=4, method="inclusive")
        iqr = q[2] - q[0]
    else:
        iqr = ordered[-1] - ordered[0]
    return TimingStats(median_us=statistics.median(ordered), iqr_us=iqr, mean_us=statistics.fmean(ordered),
                       min_us=ordered[0], trials=len(ordered), wall_us=wall[0] if wall else None,
                       host_us=wall[1] if wall else None, clock=clock)


class Flusher:
    """Writes a buffer larger than the last-level cache, so no trial starts with its data cached."""

    def __init__(self, device: str, nbytes: int) -> None:
        self.device = device
        size = max(1, (nbytes if device == "cuda" else min(nbytes, CPU_FLUSH_BYTES)) // 4)
        self.buffer = torch.empty(size, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self.buffer.zero_()


def _noop(_name: str, _trial: int) -> None:
    return None


def measure(fns: dict[str, Callable[[int], object]], policy: TrialPolicy, device: str, flush_bytes: int = 256 * 2**20,
            before: Callable[[str, int], None] = _noop, warmup: int = 2, cross_check: bool = True
            ) -> dict[str, TimingStats]:
    """Time every callable (`fn(trial)`), interleaved; `before(name, trial)` runs untimed ahead of each trial."""
    cuda = device == "cuda"
    flush = Flusher(device, flush_bytes)
    names = list(fns)
    for name in names:  # warm-up: JIT compiles, lazy module loads, allocator growth
        for i in range(warmup):
            before(name, i)
            fns[name](i)
    if cuda:
        _synchronize()
    samples: dict[str, list] = {n: [] for n in names}
    started, rounds = _perf_counter(), 0
    while True:
        order = names[rounds % len(names):] + names[: rounds % len(names)]
        for name in order:
            before(name, rounds)
            flush()
            if cuda:
                start, end = _Event(enable_timing=True), _Event(enable_timing=True)
                _event_record(start)
                fns[name](rounds)
                _event_record(end)
                samples[name].append((start, end))
            else:
                t0 = _perf_counter()
                fns[name](rounds)
                samples[name].append((_perf_counter() - t0) * 1e6)
        rounds += 1
        if cuda and rounds % SYNC_EVERY == 0:
            _synchronize()
        if policy.done(rounds, _perf_counter() - started):
            break
    if cuda:
        _synchronize()
        times = {n: [_event_elapsed(s, e) * 1000.0 for s, e in samples[n]] for n in names}
    else:
        times = samples
    results = {}
    for name in names:
        median = statistics.median(times[name])
        wall = _wall_us(fns[name], before, name, median) if (cuda and cross_check) else None
        results[name] = _stats(times[name], wall, "cuda-events" if cuda else "perf-counter")
    return results


def _wall_us(fn: Callable[[int], object], before: Callable[[str, int], None], name: str,
             median_us: float) -> tuple[float, float]:
    """Back-to-back calls between two device-wide syncs: work hidden on another stream is counted here.

    Returns (wall, host) µs per call: host is the time the calls took to issue, before the final
    sync. A µs-scale kernel's wall time is its launch overhead, which the host time shows; hidden
    asynchronous work makes the wall time long while the calls return at once.
    """
    calls = int(min(50, max(3, WALL_BUDGET_S * 1e6 / max(median_us, 1.0))))
    _synchronize()
    t0 = _perf_counter()
    for i in range(calls):
        before(name, i)
        fn(i)
    issued = _perf_counter()
    _synchronize()
    done = _perf_counter()
    return (done - t0) * 1e6 / calls, (issued - t0) * 1e6 / calls


def stream_escape(stats: TimingStats) -> str | None:
    """A reason if the events missed most of the work (wall time far above event time), else None.

    Host launch overhead makes the wall time of a µs-scale kernel legitimately larger: it is
    compared with the larger of the event time and the host's own time per call, plus a margin.
    Work hidden on another stream returns at once and runs on, so its wall time is many times both.
    (Host time cannot hide GPU work: on an otherwise idle stream the events span it too.)
    """
    if stats.wall_us is None:
        return None
    floor = max(stats.median_us, stats.host_us or 0.0)
    if stats.wall_us > ESCAPE_RATIO * floor + ESCAPE_MARGIN_US:
        host = f", {stats.host_us:.1f} µs to issue" if stats.host_us is not None else ""
        return (f"device-synchronised wall time {stats.wall_us:.1f} µs per call vs {stats.median_us:.1f} µs "
                f"on the timed stream's events{host}: work runs outside the timed stream")
    return None
