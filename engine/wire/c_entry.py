"""A C problem's entry point as both sides of the boundary call it: loaded through ctypes, its arrays
placed in memory the same way by the judge (reference, naive CUDA port) and the runner (candidate).

Placement is part of the measurement. An atomics-bound kernel (the library's histogram: every element an
atomicAdd on one of 256 bins) ran 30 % faster on one H100 with its bins 128 bytes past a 1 KiB boundary
than on the boundary (`benchmarks/atomic_placement.py`): two processes whose allocators happen to put the
same array at different offsets would time one kernel as two. So every array of a call lies at a fixed
residue of its address modulo `PLACEMENT_PERIOD`, chosen by the argument's position, on both sides.
Positions are staggered by a page plus 256 bytes so no two arguments share a page offset (4 KiB aliasing
on the host) or a 1 KiB window (the GPU's L2 slices).

The same offsets are not the same memory: which L2 slice serves a line also depends on its physical page,
which each process's allocations draw afresh, and a kernel whose atomics all land on a few lines (a sum
into one float) moves with it. Timed calls therefore rotate through `PLACEMENTS` separate placements of
every small array, offsets stepped by 128 bytes through the 1 KiB window, in the same order on both sides:
each side's median is then taken over the same spread of placements rather than one draw of it. Large
arrays (many pages, streamed) keep one placement and their memory.
"""

from __future__ import annotations

import ctypes

import numpy as np
import torch

from engine.wire.c_inputs import NUMPY_TYPES, ArgSpec

SCALARS = {"int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double}
PLACEMENT_PERIOD = 65536
PLACEMENT_STAGGER = 4096 + 256
PLACEMENTS = 8  # placements a small array rotates through during timing
ROTATION_STEP = 128  # bytes between one placement's offset and the next: 8 steps span the 1 KiB window
ROTATED_BYTES = 1 << 20  # arrays up to this size rotate (hot, few lines); larger ones keep one placement


def load_entry(path: str, entry: str, specs: list[ArgSpec]) -> tuple[ctypes.CDLL, ctypes._CFuncPtr]:
    """The library and its entry with argument types declared, so ctypes converts scalars correctly."""
    library = ctypes.CDLL(str(path))
    function = getattr(library, entry)
    function.restype = None
    function.argtypes = [ctypes.c_void_p if s.is_array else SCALARS[s.base_type] for s in specs]
    return library, function


def placement_residue(position: int, rotation: int = 0) -> int:
    return (position * PLACEMENT_STAGGER + rotation * ROTATION_STEP) % PLACEMENT_PERIOD


def placed_copy(source: torch.Tensor, device: str, position: int, rotation: int = 0) -> torch.Tensor:
    """A contiguous copy of `source` on `device` whose address is `placement_residue(position, rotation)`
    modulo the period (it keeps its over-sized allocation alive through the view)."""
    nbytes = source.numel() * source.element_size()
    raw = torch.empty(nbytes + PLACEMENT_PERIOD, dtype=torch.uint8, device=device)
    start = (placement_residue(position, rotation) - raw.data_ptr()) % PLACEMENT_PERIOD
    placed = raw[start:start + nbytes].view(source.dtype).view(source.shape)
    placed.copy_(source)
    return placed


def rotates(spec) -> bool:
    """Whether an array argument takes a new placement in each set (small: few lines, hot), or keeps one."""
    return spec.size * np.dtype(NUMPY_TYPES[spec.base_type]).itemsize <= ROTATED_BYTES


def timing_placements(specs: list, values: dict, device: str) -> list[dict[str, torch.Tensor]]:
    """`PLACEMENTS` sets of the call's arrays for timed calls, to be used in turn (`PlacementCycle`): each
    small array copied afresh at the set's offset, each large one the same tensor in every set."""
    sets: list[dict[str, torch.Tensor]] = []
    for rotation in range(PLACEMENTS):
        arrays = {}
        for position, spec in enumerate(specs):
            if not spec.is_array:
                continue
            if sets and not rotates(spec):
                arrays[spec.name] = sets[0][spec.name]
            else:
                arrays[spec.name] = placed_copy(torch.from_numpy(values[spec.name]), device, position, rotation)
        sets.append(arrays)
    return sets


class PlacementCycle:
    """Which set of arrays the next timed call uses: in turn, across the blocks of one timing, so a side's
    blocks of three trials still visit every placement and both sides visit them in the same order."""

    def __init__(self, count: int) -> None:
        self.count, self.calls = count, 0

    def upcoming(self) -> int:
        return self.calls % self.count

    def advance(self) -> int:
        index = self.upcoming()
        self.calls += 1
        return index

    def used(self) -> int:
        """How many of the sets a call has used (they are used in order)."""
        return min(self.calls, self.count)
