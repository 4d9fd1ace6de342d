"""The timing loop both sides run: per-trial CUDA events on the stream the work runs on, an L2 flush
before every trial, warm-up, adaptive or exact trial counts.

The runner times the candidate with it and reports the samples; the judge times the baselines with
the same loop in its own process and checks the runner's samples against its own clock (judge.clock),
so what the loop returns is evidence, not a verdict. Callables timed together run interleaved (one
trial of each per round, order rotating), so clock and thermal drift hit them equally. On a machine
without a GPU the same loop runs with the host clock. How many trials, and how large a flush, is a
`TrialPolicy` (engine.wire.policy; the loop's own record, re-exported here).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from engine.wire.policy import TrialPolicy

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_synchronize = torch.cuda.synchronize
_event_record = torch.cuda.Event.record
_event_elapsed = torch.cuda.Event.elapsed_time

SYNC_EVERY = 1  # rounds between host syncs. Every round: with fresh values and kept outputs around each call the
# host can take longer a trial than the device, and a device left idle between trials is room for work hidden on
# another stream that the judge's clock around the block would never see; a device-wide sync after every round
# puts all of a trial's device work, on any stream, inside the block's time
CPU_FLUSH_BYTES = 32 * 2**20
WALL_BUDGET_S = 0.25


@dataclass
class Samples:
    """One callable's per-trial times (µs) and, when cross-checked, its device-synchronised wall time per call."""

    times_us: list[float] = field(default_factory=list)
    wall_us: float | None = None
    host_us: float | None = None
    clock: str = "cuda-events"

    def to_json(self) -> dict:
        return {"times_us": self.times_us, "wall_us": self.wall_us, "host_us": self.host_us, "clock": self.clock}


class Flusher:
    """Writes a buffer larger than the last-level cache, so no trial starts with its data cached."""

    def __init__(self, device: str, nbytes: int) -> None:
        self.device = device
        size = max(1, (nbytes if device == "cuda" else min(nbytes, CPU_FLUSH_BYTES)) // 4)
        self.buffer = torch.empty(size, dtype=torch.int32, device=device)

    def __call__(self) -> None:
        self.buffer.zero_()


def no_setup(_name: str, _trial: int) -> None:
    return None


def flush_cost_us(device: str, flush_bytes: int, calls: int = 5) -> float:
    """The median time of one flush alone, on this side's own clock (events on a GPU): the part of a
    trial's overhead that is the same fixed work on both sides, and that the clock check must not turn
    into room for hidden work."""
    flush = Flusher(device, flush_bytes)
    flush()
    times = []
    for _ in range(calls):
        if device == "cuda":
            start, end = _Event(enable_timing=True), _Event(enable_timing=True)
            _event_record(start)
            flush()
            _event_record(end)
            end.synchronize()
            times.append(_event_elapsed(start, end) * 1000.0)
        else:
            t0 = _perf_counter()
            flush()
            times.append((_perf_counter() - t0) * 1e6)
    return statistics.median(times)


def measure(fns: dict[str, Callable[[int], object]], policy: TrialPolicy, device: str,
            before: Callable[[str, int], None] = no_setup, warmup: int = 2, cross_check: bool = True,
            after: Callable[[str, int], None] = no_setup) -> dict[str, Samples]:
    """Time every callable (`fn(trial)`), interleaved, until `policy` is done, flushing `policy.flush_bytes`
    ahead of each trial; `before(name, trial)` runs untimed ahead of each trial (ahead of its flush),
    `after(name, trial)` untimed behind it (warm-up calls: negative trials)."""
    cuda = device == "cuda"
    flush = Flusher(device, policy.flush_bytes)
    names = list(fns)
    for name in names:  # warm-up: JIT compiles, lazy module loads, allocator growth
        for i in range(warmup):
            before(name, -1 - i)
            fns[name](-1 - i)
            after(name, -1 - i)
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
            after(name, rounds)
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
        results[name] = Samples(times[name], wall[0] if wall else None, wall[1] if wall else None,
                                "cuda-events" if cuda else "perf-counter")
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
