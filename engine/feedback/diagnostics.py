"""Assembles `Diagnostics`: places the candidate on the roofline and names its bottleneck class.

Measured numbers win over estimates: ncu's FLOPs, DRAM bytes and duration when there is a
profile, else the problem's analytical model with the verifier's timed median, else only the
analytical intensity against the device's ridge (the class is then marked a static estimate).
"""

from __future__ import annotations

from engine.analysis import (
    BUILTIN,
    DeviceCeilings,
    NcuProfile,
    NcuSummary,
    StaticReport,
    classify,
    match_device,
    precision_for,
    roofline_point,
)
from engine.feedback.model import Diagnostics

DEFAULT_TARGET = "H200"  # the device modelled when none is present or named


def _device(device: DeviceCeilings | None, evaluation, arch: str | None = None) -> tuple[DeviceCeilings | None,
                                                                                         str | None]:
    if device is not None:
        return device, None
    name = getattr(evaluation, "device", None)
    if name and (found := match_device(name)):
        return found, None
    default = match_device(DEFAULT_TARGET)
    # a report compiled for another architecture (`refinery analyze --arch sm_86`) is judged on a card of it
    if arch and default is not None and default.arch != arch.rstrip("a"):
        same = next((d for d in BUILTIN if d.arch == arch.rstrip("a")), None)
        if same is not None:
            return same, f"no device named: {same.name} ceilings assumed (a card of {same.arch})"
    return default, f"no device named: {DEFAULT_TARGET} ceilings assumed"


CPU_NOTE = "measured on the CPU: GPU rooflines, occupancy and the GPU tools do not apply to CPU code"


def build_diagnostics(static: StaticReport | None = None, ncu: NcuSummary | None = None, evaluation=None,
                      problem=None, device: DeviceCeilings | None = None, seconds: float | None = None,
                      profile: NcuProfile | None = None, on_cpu: bool = False) -> Diagnostics:
    """`seconds`: one call's time, if known from elsewhere (default: ncu's duration, else the verifier's median).

    `profile`: a raw ncu run; when it failed (no ncu, counters refused, over budget) the diagnostics
    are static only and say why. `on_cpu`: CPU code measured on the CPU, for which no GPU model holds:
    no roofline, no bottleneck class (an H200 position for a C loop would be invented).
    """
    if on_cpu:
        return Diagnostics(static=static, ncu=None, evaluation=evaluation, problem=problem, device=None,
                           notes=[CPU_NOTE])
    device, note = _device(device, evaluation, static.arch if static is not None else None)
    notes = [note] if note else []
    if profile is not None:
        if profile.ok and ncu is None:
            ncu = profile.summary()
        elif not profile.ok:
            notes.append(f"no dynamic diagnostics ({profile.reason}): static diagnostics only")
    diagnostics = Diagnostics(static=static, ncu=ncu, evaluation=evaluation, problem=problem, device=device,
                              notes=notes)
    features = static.features if static is not None else {}
    precision = precision_for(getattr(problem, "dtype", "float32") or "float32",
                              bool(features.get("uses_tensor_cores")), bool(features.get("uses_wgmma")), device)
    flops = static.flops if static is not None else None
    min_bytes = static.min_bytes if static is not None else None
    point = None
    if device is not None:
        if ncu is not None and ncu.duration_s > 0 and ncu.dram_bytes > 0:
            point = roofline_point(ncu.total_flops or flops or 0.0, ncu.dram_bytes, ncu.duration_s, device,
                                   precision, "ncu")
        else:
            if seconds is None and getattr(evaluation, "candidate_us", None):
                seconds = evaluation.candidate_us * 1e-6
            if seconds and min_bytes:
                point = roofline_point(flops or 0.0, min_bytes, seconds, device, precision, "analytical")
    diagnostics.roofline = point
    launches = (ncu.kernels if ncu is not None else 0) or int(features.get("launches_per_call", 0)) or 1
    call_seconds = ncu.duration_s if ncu is not None and ncu.duration_s else seconds
    grid = ncu.grid_blocks if ncu is not None and ncu.grid_blocks else int(features.get("grid_blocks", 0)) or None
    intensity = static.arithmetic_intensity if static is not None else None
    diagnostics.classification = classify(
        point, seconds_per_launch=call_seconds / launches if call_seconds else None,
        sm_throughput_pct=ncu.sm_throughput_pct if ncu else None,
        dram_throughput_pct=ncu.dram_throughput_pct if ncu else None,
        occupancy=(ncu.achieved_occupancy if ncu and ncu.achieved_occupancy is not None
                   else features.get("occupancy")),
        grid_blocks=grid, sms=device.sms if device else None, arithmetic_intensity=intensity,
        ridge=device.ridge(precision) if device else None)
    return diagnostics
