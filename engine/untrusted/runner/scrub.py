"""Scrubbing the CUDA caching allocator's free blocks before each call, so an output the candidate
never wrote holds the poison pattern rather than whatever an earlier call left there.

Every block torch holds but has not handed out is overwritten with POISON_BYTE (a NaN in every float
type); an output the candidate never wrote then reads as NaN and fails, and is recognisable.
"""

from __future__ import annotations

import ctypes
import functools

import torch

from engine.wire.poison import POISON_BYTE


@functools.cache
def _memset():
    """cudaMemset from the CUDA runtime torch already loaded (CuPy's when torch's is not found)."""
    try:
        import cupy

        return lambda ptr, size: cupy.cuda.runtime.memset(ptr, POISON_BYTE, size)
    except Exception:  # noqa: BLE001 - fall back to the runtime library by name
        lib = ctypes.CDLL("libcudart.so")
        lib.cudaMemset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
        return lambda ptr, size: lib.cudaMemset(ctypes.c_void_p(ptr), POISON_BYTE, size)


def scrub_free_blocks() -> int:
    """Overwrite every inactive (free, cached) block; returns the bytes scrubbed."""
    torch.cuda.synchronize()
    memset, scrubbed = _memset(), 0
    for segment in torch.cuda.memory_snapshot():
        offset = 0
        for block in segment.get("blocks", []):
            address = block.get("address", segment["address"] + offset)
            offset += block.get("size", 0)
            if block.get("state") == "inactive" and block.get("size", 0) > 0:
                memset(address, block["size"])
                scrubbed += block["size"]
    torch.cuda.synchronize()
    return scrubbed

