"""Roofline placement and the bottleneck class that decides which feedback tools run.

Arithmetic intensity comes from ncu's measured FLOPs and DRAM bytes when a profile exists, else
from the problem's analytical model (minimum bytes: a kernel moving more than that shows up as
lower achieved bandwidth, which is the point). The roof is the one for the precision and the
instruction path the SASS uses (FFMA → fp32, HMMA → the mma.sync rate, HGMMA → the wgmma rate).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum

from engine.analysis.profile.devices import DeviceCeilings
from engine.schema.policy import read_record

NEAR_ROOF = 0.6  # at or above this share of the roof a kernel is bound by that roof
LAUNCH_OVERHEAD_S = 10e-6  # below this per launch, launch latency dominates
BUSY_PCT = 60.0  # ncu SOL %: a unit this busy is the bound


class Bottleneck(StrEnum):
    MEMORY = "memory-bound"
    COMPUTE = "compute-bound"
    LATENCY = "latency-bound"  # far from every roof: too little parallelism, stalls, occupancy
    LAUNCH = "launch-overhead-bound"

    @property
    def label(self) -> str:
        return "latency/occupancy-bound" if self is Bottleneck.LATENCY else str(self)


@dataclass(frozen=True)
class RooflinePoint:
    arithmetic_intensity: float  # FLOP per DRAM byte
    achieved_flops: float  # FLOP/s
    achieved_bandwidth: float  # bytes/s
    precision: str  # which peak is the roof
    peak_flops: float
    peak_bandwidth: float
    bound: str  # memory | compute: which roof applies at this intensity
    roof: float  # attainable FLOP/s at this intensity (or bytes/s when there are no FLOPs)
    pct_of_roof: float  # 0..1
    source: str  # ncu | analytical
    seconds: float

    @property
    def ridge(self) -> float:
        return self.peak_flops / self.peak_bandwidth if self.peak_bandwidth else 0.0


@dataclass(frozen=True)
class Classification:
    bottleneck: Bottleneck
    reason: str
    measured: bool = True  # False: from the analytical model alone, with no timing of the candidate


@dataclass(frozen=True)
class RooflineRecord:
    """The stored `roofline` diagnostic: the point, the class with its reason, and the device it was
    placed against, so the dashboard draws the same roofs the feedback was decided under."""

    point: RooflinePoint | None = None
    classification: Classification | None = None
    device: str | None = None
    notes: list[str] = field(default_factory=list)
    config: str | None = None  # the configuration the point is for (None in rows stored before it was kept)

    @property
    def bottleneck(self) -> Bottleneck | None:
        return self.classification.bottleneck if self.classification else None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> RooflineRecord:
        return read_record(cls, data)


@dataclass(frozen=True)
class Achieved:
    """One timed call's work as rates: what a roofline plots, before any device is known."""

    arithmetic_intensity: float  # FLOP per DRAM byte (0 without bytes)
    flops_per_s: float
    bytes_per_s: float


def achieved(flops: float, dram_bytes: float, seconds: float) -> Achieved:
    """Intensity and achieved rates of `flops` and `dram_bytes` moved in `seconds` (> 0)."""
    return Achieved(flops / dram_bytes if dram_bytes > 0 else 0.0, flops / seconds, dram_bytes / seconds)


def attainable(intensity: float, peak_flops: float, bandwidth: float) -> float:
    """The roof at an intensity: bandwidth × intensity up to the ridge, the compute peak after it."""
    return min(peak_flops, bandwidth * intensity) if bandwidth else peak_flops


def precision_for(dtype: str, uses_tensor_cores: bool = False, uses_wgmma: bool = False,
                  device: DeviceCeilings | None = None) -> str:
    """The peak a kernel can reach: the dtype's, on the pipe its SASS uses."""
    base = {"float64": "fp64", "float16": "fp16", "bfloat16": "bf16", "tf32": "tf32"}.get(dtype, "fp32")
    if uses_tensor_cores:
        if base == "fp64":
            return "fp64_tc"
        tensor = base if base in ("fp16", "bf16", "tf32") else "tf32"
        hopper = device is not None and device.cc[0] >= 9
        return tensor if uses_wgmma or not hopper else f"{tensor}_mma_sync"
    if base in ("fp16", "bf16"):
        return "fp16_simt"
    return "fp32" if base == "tf32" else base


def roofline_point(flops: float, dram_bytes: float, seconds: float, device: DeviceCeilings, precision: str,
                   source: str = "analytical") -> RooflinePoint | None:
    """Where one timed call sits under the device's roofs; None without time or bytes."""
    if seconds <= 0 or dram_bytes <= 0:
        return None
    peak = device.peak(precision) or device.peak("fp32") or 0.0
    bandwidth = device.dram_bandwidth
    rates = achieved(flops, dram_bytes, seconds)
    if flops <= 0:  # pure data movement: the roof is bandwidth itself
        return RooflinePoint(0.0, 0.0, rates.bytes_per_s, precision, peak, bandwidth, "memory", bandwidth,
                             rates.bytes_per_s / bandwidth, source, seconds)
    bound = "memory" if bandwidth * rates.arithmetic_intensity < peak else "compute"
    roof = attainable(rates.arithmetic_intensity, peak, bandwidth)
    return RooflinePoint(rates.arithmetic_intensity, rates.flops_per_s, rates.bytes_per_s, precision, peak,
                         bandwidth, bound, roof, rates.flops_per_s / roof if roof else 0.0, source, seconds)


def classify(point: RooflinePoint | None = None, *, seconds_per_launch: float | None = None,
             sm_throughput_pct: float | None = None, dram_throughput_pct: float | None = None,
             occupancy: float | None = None, grid_blocks: int | None = None, sms: int | None = None,
             arithmetic_intensity: float | None = None, ridge: float | None = None) -> Classification:
    """One class per candidate and configuration, with the number that decided it."""
    if seconds_per_launch is not None and seconds_per_launch < LAUNCH_OVERHEAD_S:
        return Classification(Bottleneck.LAUNCH, f"{seconds_per_launch * 1e6:.1f} µs per launch: launch latency "
                                                 "is a large share of the time")
    if point is not None and point.pct_of_roof >= NEAR_ROOF:
        cls = Bottleneck.MEMORY if point.bound == "memory" else Bottleneck.COMPUTE
        return Classification(cls, f"{point.pct_of_roof:.0%} of the {point.bound} roof")
    if dram_throughput_pct is not None and dram_throughput_pct >= BUSY_PCT:
        return Classification(Bottleneck.MEMORY, f"DRAM {dram_throughput_pct:.0f}% busy")
    if sm_throughput_pct is not None and sm_throughput_pct >= BUSY_PCT:
        return Classification(Bottleneck.COMPUTE, f"SM {sm_throughput_pct:.0f}% busy")
    if point is not None:
        detail = f"{point.pct_of_roof:.0%} of the {point.bound} roof"
        if occupancy is not None:
            detail += f", occupancy {occupancy:.0%}"
        return Classification(Bottleneck.LATENCY, detail + ": neither DRAM nor the math pipes are the limit")
    # static only: where the analytical intensity falls against the ridge, unless the grid cannot fill the GPU
    if grid_blocks is not None and sms and grid_blocks < sms:
        return Classification(Bottleneck.LATENCY, f"grid of {grid_blocks} blocks for {sms} SMs (static estimate)",
                              False)
    if arithmetic_intensity is not None and ridge:
        if arithmetic_intensity < ridge:
            return Classification(Bottleneck.MEMORY, f"intensity {arithmetic_intensity:.2g} FLOP/B below the ridge "
                                                     f"{ridge:.3g} (static estimate)", False)
        return Classification(Bottleneck.COMPUTE, f"intensity {arithmetic_intensity:.3g} FLOP/B above the ridge "
                                                  f"{ridge:.3g} (static estimate)", False)
    return Classification(Bottleneck.MEMORY, "no timing or model: memory-bound assumed (most kernels are)", False)
