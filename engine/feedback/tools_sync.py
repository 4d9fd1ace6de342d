"""Synchronisation tools: barriers some threads never reach, barriers a single-warp block does not
need, and barrier stalls that dominate the warps' time."""

from __future__ import annotations

from engine.feedback.model import Diagnostics, Finding
from engine.feedback.registry import ALL_CLASSES, tool

BARRIER_STALL_SHARE = 0.3


@tool("barrier-placement", serves=ALL_CLASSES)
def barrier_placement(d: Diagnostics) -> list[Finding]:
    """__syncthreads under thread-dependent control flow, redundant barriers, and barrier-bound stalls."""
    findings = []
    for kernel in d.static.kernels if d.static is not None else []:
        source = kernel.source
        if source is None:
            continue
        if source.sync_in_divergent_branch:
            findings.append(Finding(
                tool="barrier-placement", category="warp/divergent-barrier", title="barrier in a divergent branch",
                evidence=f"{source.sync_in_divergent_branch} __syncthreads() under a condition on threadIdx: "
                         "threads that skip it leave the others waiting (undefined behaviour: hangs or wrong results)",
                suggestion="move the barrier out of the branch so every thread of the block reaches it, and guard "
                           "only the work inside", severity=0.95, value=float(source.sync_in_divergent_branch),
                kernel=kernel.name))
        if source.sync_after_divergent_return:
            findings.append(Finding(
                tool="barrier-placement", category="warp/divergent-barrier", title="barrier after an early return",
                evidence="threads that returned early (a threadIdx-dependent `return`) never reach the later "
                         "__syncthreads()",
                suggestion="replace the early return by a guard around the work so all threads reach each barrier",
                severity=0.8, value=float(source.sync_after_divergent_return), kernel=kernel.name))
        if source.syncthreads and kernel.launch.threads <= 32 and kernel.launch.origin != "assumed":
            findings.append(Finding(
                tool="barrier-placement", category="warp/redundant-synchronization",
                title="block-wide barrier in a one-warp block",
                evidence=f"{source.syncthreads} __syncthreads() with {kernel.launch.threads}-thread blocks",
                suggestion="use __syncwarp() (or nothing, for warp-synchronous shuffles): a single warp needs no "
                           "block barrier", severity=0.15, value=float(source.syncthreads), kernel=kernel.name))
    if d.ncu is not None and d.ncu.top_stalls:
        total = sum(v for _, v in d.ncu.top_stalls)
        barrier = dict(d.ncu.top_stalls).get("barrier", 0.0)
        if total and barrier / total >= BARRIER_STALL_SHARE:
            findings.append(Finding(
                tool="barrier-placement", category="warp/redundant-synchronization", title="warps wait at barriers",
                evidence=f"barrier stalls are {barrier / total:.0%} of the top stall reasons "
                         f"({barrier:.1f} warps per issue)",
                suggestion="give each barrier more work between syncs (larger tiles, double buffering) or remove "
                           "barriers that protect nothing", severity=0.45, value=barrier / total))
    return findings
