"""Energy per call from NVML's cumulative energy counter, read around a loop of back-to-back calls.

The counter (mJ since driver load) moves in ~100 ms steps and one read costs milliseconds, so
energy is never read per launch: the loop runs for at least `min_seconds` (1-2 s gives 10-20
counter updates, quantisation within ~10 %) and J/call is the difference over the call count.
It lives with the judge because the judge measures it, around the calls it times; runs store and pages read
its `EnergyRecord`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from engine.schema.policy import read_record

DEFAULT_SECONDS = 2.0


class EnergyUnavailable(RuntimeError):
    pass


@dataclass(frozen=True)
class EnergyMeasurement:
    joules_per_call: float
    seconds_per_call: float
    calls: int
    seconds: float
    joules: float
    average_watts: float
    idle_watts: float | None  # power before the loop, for the matched-speed comparison
    device: str = ""  # empty in a stored record's sides: the record names the device once


@dataclass(frozen=True)
class EnergyComparison:
    """Candidate vs baseline on the same work: per call, and at the baseline's speed.

    At matched speed the faster of the two idles for the rest of the slower one's call time, so
    its energy per call is its own plus idle power times the time it saved: a kernel that is faster
    only by drawing much more power does not look better than it is.
    """

    candidate_joules: float
    baseline_joules: float
    ratio: float  # candidate / baseline J per call (< 1: the candidate uses less energy)
    matched_speed_joules: float
    matched_speed_ratio: float


@dataclass(frozen=True)
class EnergyRecord:
    """The stored `energy` diagnostic: J per call of the candidate and, where the baseline ran on the
    same GPU, of the baseline and the comparison; or, when nothing was measured, the reason."""

    device: str = ""
    loop_seconds: float = 0.0
    candidate: EnergyMeasurement | None = None
    calls_reported_by: str = ""  # whose count of calls the candidate's J per call divides by
    baseline_name: str | None = None
    baseline: EnergyMeasurement | None = None
    comparison: EnergyComparison | None = None
    reason: str = ""  # why there is no reading (then `candidate` is None)

    def to_json(self) -> dict:
        data = asdict(self)
        for side in ("candidate", "baseline"):
            if data[side] is not None:
                data[side].pop("device")
        return data

    @classmethod
    def from_json(cls, data: dict) -> EnergyRecord:
        return read_record(cls, data)


def _nvml():
    try:
        import pynvml
    except ImportError as exc:
        raise EnergyUnavailable("pynvml (nvidia-ml-py) is not installed") from exc
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise EnergyUnavailable(f"NVML did not start: {exc}") from exc
    return pynvml


def _default_sync() -> None:
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.synchronize()
    except ImportError:
        pass


def measure_energy(fn: Callable[[], object], min_seconds: float = DEFAULT_SECONDS, device_index: int = 0,
                   sync: Callable[[], None] | None = None, warmup: int = 3) -> EnergyMeasurement:
    """Joules per call of `fn` (which enqueues GPU work) over a loop of at least `min_seconds`."""
    sync = sync or _default_sync
    for _ in range(warmup):
        fn()
    sync()
    probe_started = time.perf_counter()
    probe = 0
    while probe < 1000 and (time.perf_counter() - probe_started < 0.05 or probe < 3):
        fn()
        probe += 1
    sync()
    per_call = (time.perf_counter() - probe_started) / probe
    batch = max(1, math.ceil(min_seconds / max(per_call, 1e-7) / 4))

    def loop(seconds: float) -> int:
        started, calls = time.perf_counter(), 0
        while True:
            for _ in range(batch):
                fn()
            calls += batch
            sync()
            if time.perf_counter() - started >= seconds:
                return calls

    return measure_energy_of_loop(loop, min_seconds, device_index)


def measure_energy_of_loop(loop: Callable[[float], int], seconds: float = DEFAULT_SECONDS,
                           device_index: int = 0) -> EnergyMeasurement:
    """Joules per call of a loop that runs calls for `seconds` and returns how many it ran; the
    counter is read here, around the loop, so the loop may run in another process (a candidate's)."""
    pynvml = _nvml()
    try:
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        name = pynvml.nvmlDeviceGetName(handle)
        name = name.decode() if isinstance(name, bytes) else str(name)
        idle = _power_watts(pynvml, handle)
        start_energy = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
        started = time.perf_counter()
        calls = loop(seconds)
        elapsed = time.perf_counter() - started
        end_energy = pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    except pynvml.NVMLError as exc:
        raise EnergyUnavailable(f"NVML energy counter not readable: {exc}") from exc
    if calls <= 0:
        raise EnergyUnavailable("the loop ran no calls")
    joules = (end_energy - start_energy) / 1000.0
    return EnergyMeasurement(joules_per_call=joules / calls, seconds_per_call=elapsed / calls, calls=calls,
                             seconds=elapsed, joules=joules, average_watts=joules / elapsed, idle_watts=idle,
                             device=name)


def _power_watts(pynvml, handle) -> float | None:
    try:
        return pynvml.nvmlDeviceGetPowerUsage(handle) / 1000.0
    except pynvml.NVMLError:
        return None


def compare_energy(candidate: EnergyMeasurement, baseline: EnergyMeasurement) -> EnergyComparison:
    """Energy of the candidate relative to the baseline, per call and at the slower one's speed."""
    idle = candidate.idle_watts if candidate.idle_watts is not None else baseline.idle_watts or 0.0
    slack = baseline.seconds_per_call - candidate.seconds_per_call
    matched_candidate = candidate.joules_per_call + max(slack, 0.0) * idle
    matched_baseline = baseline.joules_per_call + max(-slack, 0.0) * idle
    return EnergyComparison(
        candidate_joules=candidate.joules_per_call, baseline_joules=baseline.joules_per_call,
        ratio=candidate.joules_per_call / baseline.joules_per_call if baseline.joules_per_call else math.inf,
        matched_speed_joules=matched_candidate,
        matched_speed_ratio=matched_candidate / matched_baseline if matched_baseline else math.inf)
