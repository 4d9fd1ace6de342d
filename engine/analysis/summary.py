"""A static report in words a person reads: one row per kernel and the highlights of its SASS.

The command line and the dashboard's Analyze page print the same rows, so the two never say
different things about one file; the report's full record stays in its JSON.
"""

from __future__ import annotations

from engine.analysis.binary.occupancy import Occupancy
from engine.analysis.binary.sass import InstructionMix
from engine.analysis.record import KernelReport, StaticReport
from engine.analysis.source.launch import LaunchConfig

ORIGINS = {"launch-site": "the <<< >>> launch", "cupy-launch": "the CuPy launch", "launch-bounds": "__launch_bounds__",
           "given": "given", "assumed": "assumed"}
LIMITERS = {"registers": "registers", "shared_mem": "shared memory", "warps": "warp slots",
            "blocks": "blocks per SM", "barriers": "barriers", "none": "nothing (full)"}
# (mix class, SASS name) in the order a reader scans them: memory first, then sync, then math
_MIX = (("global_load", "LDG"), ("global_store", "STG"), ("shared_load", "LDS"), ("shared_store", "STS"),
        ("local_memory", "LDL/STL"), ("atomic", "atomics"), ("barrier", "BAR"), ("shuffle", "SHFL"),
        ("tensor", "MMA"), ("ffma", "FFMA"), ("fadd", "FADD"), ("fmul", "FMUL"), ("fp64", "FP64"),
        ("fp16", "HFMA2"), ("mufu", "MUFU"))


def fmt_bytes(value: float) -> str:
    """Bytes in the largest binary unit that keeps a number of at least one; the feedback tools word bytes so too."""
    value = abs(value)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if value >= size:
            scaled = value / size
            return f"{scaled:.0f} {unit}" if scaled >= 10 or scaled == int(scaled) else f"{scaled:.1f} {unit}"
    return f"{value:.0f} bytes"


def dims(value: tuple[int, int, int] | None) -> str:
    return "×".join(str(v) for v in value) if value else "?"


def launch_text(launch: LaunchConfig) -> str:
    """`grid 4096×1×1, block 256×1×1 from the <<< >>> launch` (and its dynamic shared memory)."""
    grid = f"grid {dims(launch.grid)}" if launch.grid else "grid unknown"
    text = f"{grid}, block {dims(launch.block)}"
    if launch.dynamic_smem:
        text += f", {fmt_bytes(launch.dynamic_smem)} dynamic shared"
    return f"{text} ({ORIGINS.get(launch.origin, launch.origin)})"


def occupancy_of(kernel: KernelReport, arch: str) -> Occupancy | None:
    target = arch.removesuffix("a")
    return kernel.occupancy.get(target) or next(iter(kernel.occupancy.values()), None)


def _widths(widths: dict[int, int]) -> str:
    if not widths or set(widths) == {4}:
        return ""
    return " (" + ", ".join(f"{count}×{8 * width}-bit" for width, count in sorted(widths.items(), reverse=True)) + ")"


def mix_highlights(mix: InstructionMix | None) -> str:
    """`144 SASS; LDG 2 (2×128-bit), STG 1, LDS 40, BAR 2, FFMA 32; in loops: LDS 40, FFMA 32`."""
    if mix is None:
        return "no SASS"
    parts = []
    for name, label in _MIX:
        count = mix.count(name)
        if not count:
            continue
        width = _widths(mix.global_load_widths if name == "global_load" else
                        mix.global_store_widths if name == "global_store" else
                        mix.shared_load_widths if name == "shared_load" else {})
        parts.append(f"{label} {count}{width}")
    loops = [f"{label} {mix.in_loop[name]}" for name, label in _MIX if mix.in_loop.get(name)]
    text = f"{mix.total} SASS" + (f"; {', '.join(parts)}" if parts else "")
    return text + (f"; in loops: {', '.join(loops)}" if loops else "")


def _coalescing(kernel: KernelReport) -> str:
    spr = kernel.sectors_per_request()
    if spr is None:
        return "–"
    worst = kernel.worst_access()
    text = f"{spr:.1f} sectors/request"
    if worst is not None and worst.excess > 2:
        text += f" (worst {worst.sectors}, line {worst.line})"
    return text


def _banks(kernel: KernelReport) -> str:
    worst = kernel.worst_shared_access()
    if worst is None:
        return "–"
    return "conflict-free" if worst.excess <= 1 else f"{worst.excess:.0f}-way (line {worst.line})"


def kernel_row(kernel: KernelReport, arch: str) -> dict[str, str]:
    """One kernel's resources, launch, occupancy and its limiter, SASS and access estimates, as text."""
    r = kernel.resources
    occupancy = occupancy_of(kernel, arch)
    smem = fmt_bytes(r.smem_bytes) if r is not None else "?"
    if kernel.launch.dynamic_smem:
        smem += f" + {fmt_bytes(kernel.launch.dynamic_smem)} dynamic"
    return {
        "kernel": kernel.name,
        "registers": str(r.registers) if r is not None else "?",
        "spills": (f"{r.spill_stores} B stored, {r.spill_loads} B loaded" if r.spill_bytes else "none")
        if r is not None else "?",
        "shared memory": smem,
        "block": dims(kernel.launch.block),
        "grid": dims(kernel.launch.grid) if kernel.launch.grid else "unknown",
        "launch from": ORIGINS.get(kernel.launch.origin, kernel.launch.origin),
        "occupancy": f"{occupancy.occupancy:.0%} ({occupancy.blocks_per_sm} blocks/SM, {occupancy.arch})"
        if occupancy is not None else "?",
        "limited by": LIMITERS.get(occupancy.limiter, occupancy.limiter) if occupancy is not None else "?",
        "coalescing": _coalescing(kernel),
        "bank conflicts": _banks(kernel),
        "SASS": mix_highlights(kernel.mix),
    }


def kernel_rows(static: StaticReport) -> list[dict[str, str]]:
    return [kernel_row(kernel, static.arch) for kernel in static.kernels]


def model_text(static: StaticReport, bytes_origin: str = "", flops_origin: str = "") -> str:
    """The analytical FLOPs and minimum bytes where known, and their intensity."""
    parts = []
    if static.min_bytes:
        parts.append(f"minimum bytes {fmt_bytes(static.min_bytes)}" + (f" ({bytes_origin})" if bytes_origin else ""))
    else:
        parts.append("minimum bytes unknown")
    if static.flops:
        parts.append(f"FLOPs {static.flops:.3g}" + (f" ({flops_origin})" if flops_origin else ""))
    else:
        parts.append("FLOPs unknown")
    if static.arithmetic_intensity:
        parts.append(f"intensity {static.arithmetic_intensity:.3g} FLOP/byte")
    return "; ".join(parts)
