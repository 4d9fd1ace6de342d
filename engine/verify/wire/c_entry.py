"""A C problem's entry point as both sides of the boundary call it: loaded through ctypes, its arrays
placed in memory the same way by the judge (reference, naive CUDA port) and the runner (candidate).

Placement is part of the measurement. An atomics-bound kernel (the library's histogram: every element an
atomicAdd on one of 256 bins) ran 30 % faster on one H100 with its bins 128 bytes past a 1 KiB boundary
than on the boundary (`benchmarks/atomic_placement.py`): two processes whose allocators happen to put the
same array at different offsets would time one kernel as two. So every array of a call lies at a fixed
residue of its address modulo `PLACEMENT_PERIOD`, chosen by the argument's position, on both sides.
Positions are staggered by a page plus 256 bytes so no two arguments share a page offset (4 KiB aliasing
on the host) or a 1 KiB window (the GPU's L2 slices).
"""

from __future__ import annotations

import ctypes

import torch

from engine.verify.wire.c_inputs import ArgSpec

SCALARS = {"int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double}
PLACEMENT_PERIOD = 65536
PLACEMENT_STAGGER = 4096 + 256


def load_entry(path: str, entry: str, specs: list[ArgSpec]) -> tuple[ctypes.CDLL, ctypes._CFuncPtr]:
    """The library and its entry with argument types declared, so ctypes converts scalars correctly."""
    library = ctypes.CDLL(str(path))
    function = getattr(library, entry)
    function.restype = None
    function.argtypes = [ctypes.c_void_p if s.is_array else SCALARS[s.base_type] for s in specs]
    return library, function


def placement_residue(position: int) -> int:
    return (position * PLACEMENT_STAGGER) % PLACEMENT_PERIOD


def placed_copy(source: torch.Tensor, device: str, position: int) -> torch.Tensor:
    """A contiguous copy of `source` on `device` whose address is `placement_residue(position)` modulo the
    period (it keeps its over-sized allocation alive through the view)."""
    nbytes = source.numel() * source.element_size()
    raw = torch.empty(nbytes + PLACEMENT_PERIOD, dtype=torch.uint8, device=device)
    start = (placement_residue(position) - raw.data_ptr()) % PLACEMENT_PERIOD
    placed = raw[start:start + nbytes].view(source.dtype).view(source.shape)
    placed.copy_(source)
    return placed
