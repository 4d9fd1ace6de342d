"""One memory region shared by the judge and a runner, for the tensors that cross the boundary.

The judge creates it (a memfd, sized to the largest set of outputs it expects), passes the descriptor,
and reads the runner's outputs from it; the runner maps it and copies its outputs in. On a GPU the
judge registers it with CUDA as page-locked memory once and lends it from runner to runner (the judge's
RegionCache); each runner, a fresh process, copies into it unpinned (pinning costs more than it saves
on one candidate's outputs: benchmarks/region_pinning.py). The
runner can write anything there at any time: the judge copies what it reads before it compares, and
takes shapes and dtypes from its own expectations, never from the region. The region is sealed at
its size (the runner cannot shrink it under the judge's reads, which would end the judge with SIGBUS).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import mmap
import os
import resource
from dataclasses import dataclass

import torch

ALIGN = 256
DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16, torch.int32,
    torch.int64, torch.bool, torch.complex64, torch.complex128)}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def aligned(size: int) -> int:
    return (size + ALIGN - 1) // ALIGN * ALIGN


@dataclass
class TensorSlot:
    """Where one tensor lies in the region: offset, dtype name and shape (plain JSON)."""

    offset: int
    dtype: str
    shape: list[int]

    @property
    def nbytes(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count * torch.empty((), dtype=DTYPES[self.dtype]).element_size()

    def to_json(self) -> dict:
        return {"offset": self.offset, "dtype": self.dtype, "shape": list(self.shape)}

    @classmethod
    def from_json(cls, data: dict) -> TensorSlot:
        if data.get("dtype") not in DTYPES:
            raise ValueError(f"unknown dtype {data.get('dtype')!r}")
        shape = [int(s) for s in data.get("shape", [])]
        if any(s < 0 for s in shape):
            raise ValueError("negative size in a shape")
        return cls(int(data["offset"]), data["dtype"], shape)


class SharedRegion:
    kind = "host"

    def __init__(self, fd: int, size: int, pin: bool) -> None:
        self.fd, self.size = fd, size
        self.map = mmap.mmap(fd, size) if size else None
        self.bytes = torch.frombuffer(self.map, dtype=torch.uint8) if size else torch.empty(0, dtype=torch.uint8)
        self.pinned = False
        if pin and size and torch.cuda.is_available():
            with contextlib.suppress(Exception):  # pageable memory still works, only slower
                err = torch.cuda.cudart().cudaHostRegister(self.bytes.data_ptr(), size, 0)
                self.pinned = int(err) == 0

    @classmethod
    def create(cls, size: int, pin: bool = True) -> SharedRegion:
        fd = os.memfd_create("refinery-tensors", os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, max(size, 0))
        except OSError as exc:
            os.close(fd)
            if exc.errno != errno.EFBIG:
                raise
            raise OSError(exc.errno, f"a shared region of {size} bytes is larger than this process may make (its "
                                     f"file-size limit is {resource.getrlimit(resource.RLIMIT_FSIZE)[0]} bytes)"
                          ) from exc
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        return cls(fd, size, pin)

    def zero(self) -> None:
        """Erase whatever a runner left here, before the region serves the next one."""
        if self.size:
            self.bytes.zero_()

    def fresh(self) -> None:
        """Nothing left to erase (`zero` did it); the GPU region erases here, on the judge's own thread."""

    @classmethod
    def attach(cls, fd: int, size: int, pin: bool = True) -> SharedRegion:
        if os.fstat(fd).st_size < size:
            raise ValueError("the shared region is smaller than announced")
        return cls(fd, size, pin)

    def view(self, slot: TensorSlot) -> torch.Tensor:
        """The bytes of `slot` as a tensor (no copy); raises ValueError if it does not fit the region."""
        end = slot.offset + slot.nbytes
        if slot.offset < 0 or end > self.size:
            raise ValueError(f"tensor of {slot.nbytes} bytes at {slot.offset} does not fit a region of {self.size}")
        dtype = DTYPES[slot.dtype]
        return self.bytes[slot.offset:end].view(dtype).view(slot.shape)

    def put(self, offset: int, tensor: torch.Tensor) -> TensorSlot:
        """Copy `tensor` (any device) into the region at `offset`; returns its slot."""
        slot = TensorSlot(offset, dtype_name(tensor.dtype), list(tensor.shape))
        target = self.view(slot)
        target.copy_(tensor.detach().reshape(slot.shape), non_blocking=False)
        return slot

    def take(self, slot: TensorSlot, device: str) -> torch.Tensor:
        """A private copy of the tensor in `slot` on `device` (the peer may rewrite the region afterwards)."""
        source = self.view(slot)
        return source.to(device, copy=True) if device != "cpu" else source.clone()

    def close(self) -> None:
        if self.pinned:
            with contextlib.suppress(Exception):
                torch.cuda.cudart().cudaHostUnregister(self.bytes.data_ptr())
            self.pinned = False
        self.bytes = torch.empty(0, dtype=torch.uint8)
        if self.map is not None:
            with contextlib.suppress(BufferError):
                self.map.close()
            self.map = None
        with contextlib.suppress(OSError):
            os.close(self.fd)


def layout(tensors: list[tuple[str, list[int]]], start: int = 0) -> tuple[list[TensorSlot], int]:
    """Consecutive aligned slots for (dtype, shape) pairs from `start`; returns the slots and the end."""
    slots, offset = [], aligned(start)
    for dtype, shape in tensors:
        slot = TensorSlot(offset, dtype, list(shape))
        slots.append(slot)
        offset = aligned(offset + slot.nbytes)
    return slots, offset
