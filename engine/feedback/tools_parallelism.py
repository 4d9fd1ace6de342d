"""Parallelism tools: the resource that limits occupancy, register spills, and a grid too small to
fill the GPU (or blocks that waste warp slots)."""

from __future__ import annotations

from engine.analysis import Bottleneck as B
from engine.analysis import fmt_bytes
from engine.feedback.model import Diagnostics, Finding
from engine.feedback.registry import tool
from engine.feedback.text import code

LOW_OCCUPANCY = 0.5
SPILL_BYTES = 16
IDLE_BLOCK_WAVES = 8  # waves of blocks a grid of early-exiting blocks must hold to count as sized to a maximum


def _target(d: Diagnostics) -> str:
    if d.device is not None:
        return d.device.arch
    return d.static.arch.rstrip("a") if d.static is not None else "sm_90"


@tool("occupancy", serves=(B.LATENCY, B.MEMORY))
def occupancy(d: Diagnostics) -> list[Finding]:
    """Theoretical occupancy under half of the SM's warp slots, naming the limiting resource."""
    findings = []
    arch = _target(d)
    for kernel in d.static.kernels if d.static is not None else []:
        occ = kernel.occupancy.get(arch) or kernel.occupancy.get("sm_90")
        capped = occ is not None and occ.limiter == "blocks" and occ.occupancy < 1.0 \
            and kernel.launch.origin != "assumed"
        if occ is None or (occ.occupancy >= LOW_OCCUPANCY and not capped):
            continue
        resources = kernel.resources
        limiter = occ.limiter
        threads = kernel.launch.threads
        if occ.blocks_per_sm == 0:
            evidence = f"0 blocks of {threads} threads fit on an SM: the launch fails ({limiter})"
            fix = "reduce the block's registers or shared memory, or the block size"
        elif limiter == "registers":
            evidence = (f"{resources.registers} registers per thread allow {occ.blocks_per_sm} blocks of {threads} "
                        f"threads per SM: {occ.occupancy:.0%} occupancy")
            fix = (f"cut live values (smaller per-thread tiles), or cap registers with __launch_bounds__({threads}, "
                   f"{occ.blocks_per_sm * 2}) and check that nothing spills")
        elif limiter == "shared_mem":
            per_block = resources.smem_bytes + kernel.launch.dynamic_smem
            evidence = (f"{fmt_bytes(per_block)} of shared memory per block allows {occ.blocks_per_sm} blocks per "
                        f"SM: {occ.occupancy:.0%} occupancy")
            fix = "use smaller tiles or fewer buffers per block, or give each block more threads over the same tile"
        elif limiter == "blocks":
            cap = occ.limits.get("blocks")
            evidence = (f"blocks of only {threads} threads: the {cap}-blocks-per-SM cap of {arch} leaves the SM at "
                        f"{occ.occupancy:.0%} occupancy")
            fix = (f"use at least {_fill_block(occ, threads)} threads per block (several warps per block), so the "
                   "blocks an SM can hold fill its warp slots")
        else:
            evidence = f"{occ.occupancy:.0%} theoretical occupancy ({limiter} limit) with {threads}-thread blocks"
            fix = "choose a block size that divides the SM's warp slots evenly (128, 256 or 512 threads)"
        achieved = d.ncu.achieved_occupancy if d.ncu is not None else None
        if achieved is not None:
            evidence += f"; measured {achieved:.0%}"
        findings.append(Finding(
            tool="occupancy", category="warp/launch-parameters", title=f"occupancy limited by {limiter}",
            evidence=evidence, suggestion=fix, severity=0.25 + 0.5 * (LOW_OCCUPANCY - occ.occupancy) / LOW_OCCUPANCY,
            value=occ.occupancy, kernel=kernel.name))
    return findings


def _fill_block(occ, threads: int) -> int:
    """The smallest multiple of 32 threads per block at which the block cap no longer limits the SM."""
    blocks = occ.limits.get("blocks") or 1
    size = threads
    while blocks * size < occ.max_warps * 32 and size < 1024:
        size += 32
    return size


@tool("register-spills", serves=(B.MEMORY, B.COMPUTE, B.LATENCY))
def register_spills(d: Diagnostics) -> list[Finding]:
    """Registers spilled to local memory: every spill is a memory round trip inside the hot loop."""
    findings = []
    for kernel in d.static.kernels if d.static is not None else []:
        r = kernel.resources
        local_ops = kernel.mix.count("local_memory") if kernel.mix is not None else 0
        if r is None or (r.spill_bytes < SPILL_BYTES and local_ops == 0):
            continue
        if r.spill_bytes < SPILL_BYTES:
            evidence = f"{local_ops} local-memory instructions (LDL/STL) with no spills: an array indexed at run time"
            fix = "index per-thread arrays only with compile-time constants (fully unrolled loops) so they stay in " \
                  "registers"
        else:
            evidence = (f"{r.spill_stores} bytes of spill stores and {r.spill_loads} bytes of spill loads per thread "
                        f"at {r.registers} registers ({local_ops} LDL/STL instructions)")
            fix = ("keep fewer values live: smaller per-thread tiles or arrays, or relax __launch_bounds__ so the "
                   "compiler may use more registers")
        findings.append(Finding(
            tool="register-spills", category="memory/local-memory", title="register spills", evidence=evidence,
            suggestion=fix, severity=min(0.85, 0.35 + r.spill_bytes / 4096), value=float(r.spill_bytes),
            kernel=kernel.name))
    return findings


def _idle_blocks(kernel, blocks: int, sms: int, per_sm: int) -> list[Finding]:
    """A grid of many waves whose blocks return at once past a count read from memory: it is sized to a maximum,
    and every block past the live count is scheduled, reads the count and leaves."""
    exit_branch = next((b for b in kernel.branches if b.block_exit), None)
    waves = blocks / (sms * per_sm)
    if exit_branch is None or kernel.launch.origin == "assumed" or waves < IDLE_BLOCK_WAVES:
        return []
    return [Finding(
        tool="launch-configuration", category="warp/launch-parameters", title="blocks that exit at once",
        evidence=f"{blocks} blocks ({waves:.0f} waves of {sms * per_sm} on {sms} SMs) each return at once when "
                 f"{code(exit_branch.condition)}, a count read from memory ({code(exit_branch.data_source)}): the grid "
                 "is sized to the most work there could be, and every block past the live count is scheduled only to "
                 "leave",
        suggestion=f"launch a grid sized to the GPU (about {sms * per_sm} blocks, a multiple of the SM count) and let "
                   "each block loop over the live items: for (int e = blockIdx.x; e < count; e += gridDim.x)",
        severity=0.5, value=float(blocks), kernel=kernel.name, line=exit_branch.line)]


@tool("launch-configuration", serves=(B.LATENCY, B.LAUNCH, B.MEMORY))
def launch_configuration(d: Diagnostics) -> list[Finding]:
    """A grid too small to put a block on every SM, or blocks that are not a whole number of warps."""
    findings = []
    sms = d.sms
    for kernel in d.static.kernels if d.static is not None else []:
        threads = kernel.launch.threads
        if threads % 32 and kernel.launch.origin != "assumed":
            idle = 32 - threads % 32
            findings.append(Finding(
                tool="launch-configuration", category="warp/launch-parameters", title="partial warps",
                evidence=f"{threads} threads per block leaves {idle} lanes of the last warp idle",
                suggestion="use a multiple of 32 threads per block", severity=0.2, value=float(threads),
                kernel=kernel.name))
        blocks = kernel.launch.blocks
        if d.ncu is not None and d.ncu.grid_blocks and len(d.static.kernels) == 1:
            blocks = d.ncu.grid_blocks
        if not blocks or not sms:
            continue
        arch = _target(d)
        occ = kernel.occupancy.get(arch)
        per_sm = occ.blocks_per_sm if occ is not None and occ.blocks_per_sm else 1
        findings.extend(_idle_blocks(kernel, blocks, sms, per_sm))
        if blocks >= sms:
            continue
        findings.append(Finding(
            tool="launch-configuration", category="warp/launch-parameters", title="grid too small to fill the GPU",
            evidence=f"{blocks} blocks for {sms} SMs ({per_sm} could run on each): {sms - blocks} SMs stay idle",
            suggestion=f"launch at least {sms * per_sm} blocks (size the grid from the problem, e.g. "
                       "ceil(n / threads), and keep a grid-stride loop for very large n)",
            severity=min(0.95, 1.0 - blocks / sms), value=float(blocks), kernel=kernel.name))
    return findings
