"""A shared region in GPU memory: the outputs of a GPU candidate reach the judge without crossing host memory.

The host region (`wire.shared.SharedRegion`) moves a 256 MiB output twice over PCIe, into the runner's
pageable mapping and back onto the judge's GPU: about 60 ms a call, most of a correctness check's cost on
the largest configurations. Here the judge allocates the region on its GPU with the driver's virtual memory
calls, exportable as a file descriptor (`cuMemExportToShareableHandle`), and sends that descriptor to the
runner over the same socket as the host region's memfd; the runner maps it on the same GPU and copies its
outputs in, device to device. Nothing else of the judge's memory is reachable through it: the descriptor
names this one allocation.

The rules are the host region's: the runner can write anything there at any time, so the judge copies a
tensor out before it looks at it, and takes shapes and dtypes from its own expectations. Both sides wait for
their copies to finish before they answer or reuse the region: the other process sees it only then. Before
the first output goes through a region, the runner echoes a random token the judge wrote there (`probe`): a
mapping that is not the same memory both ways sends the job back to the host region, never to a verdict.

Where the driver refuses (an old driver, a sandbox without the device's file descriptors), `create` and
`attach` raise `DeviceRegionUnavailable` and the judge keeps the host region.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import random

import torch

from engine.wire.shared import DTYPES, TensorSlot

_PINNED = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
_POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
_ON_DEVICE = 1  # CU_MEM_LOCATION_TYPE_DEVICE
_READ_WRITE = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
_GRANULARITY_MINIMUM = 0  # CU_MEM_ALLOC_GRANULARITY_MINIMUM
PROBE_BYTES = 4096  # the start of a fresh region, twice: the judge's token and the runner's echo of it


class DeviceRegionUnavailable(RuntimeError):
    """The driver gave no exportable GPU allocation here: the host region serves instead."""


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _Prop(ctypes.Structure):  # CUmemAllocationProp
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):  # CUmemAccessDesc
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


@functools.cache
def _driver():
    """The CUDA driver library torch already loaded."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        raise DeviceRegionUnavailable(f"no CUDA driver library ({exc})") from exc
    u64, size_t, ptr = ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p
    signatures = {
        "cuMemGetAllocationGranularity": [ctypes.POINTER(size_t), ctypes.POINTER(_Prop), ctypes.c_int],
        "cuMemCreate": [ctypes.POINTER(u64), size_t, ctypes.POINTER(_Prop), u64],
        "cuMemExportToShareableHandle": [ptr, u64, ctypes.c_int, u64],
        "cuMemImportFromShareableHandle": [ctypes.POINTER(u64), ptr, ctypes.c_int],
        "cuMemAddressReserve": [ctypes.POINTER(u64), size_t, size_t, u64, u64],
        "cuMemMap": [u64, size_t, size_t, u64, u64],
        "cuMemSetAccess": [u64, size_t, ctypes.POINTER(_AccessDesc), size_t],
        "cuMemUnmap": [u64, size_t],
        "cuMemAddressFree": [u64, size_t],
        "cuMemRelease": [u64],
    }
    for name, args in signatures.items():
        try:
            function = getattr(lib, name)
        except AttributeError as exc:
            raise DeviceRegionUnavailable(f"the CUDA driver has no {name}") from exc
        function.argtypes, function.restype = args, ctypes.c_int
    return lib


def _check(result: int, call: str) -> None:
    if result != 0:
        raise DeviceRegionUnavailable(f"{call} failed with CUDA driver error {result}")


def _current_context() -> int:
    """The current GPU, with its primary context made current on this thread (the driver's calls need one;
    torch creates it lazily, at the first work on the device)."""
    torch.cuda.init()
    device = torch.cuda.current_device()
    torch.cuda.synchronize(device)
    return device


def _prop(device: int) -> _Prop:
    prop = _Prop()
    prop.type, prop.requestedHandleTypes = _PINNED, _POSIX_FD
    prop.location = _Location(_ON_DEVICE, device)
    return prop


class _Bytes:
    """The region's memory as `__cuda_array_interface__`, for torch to view without owning it."""

    def __init__(self, address: int, size: int) -> None:
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (address, False),
                                         "version": 3, "strides": None, "stream": None}


class DeviceRegion:
    """One exportable allocation on one GPU, mapped into this process; the same interface as `SharedRegion`."""

    kind = "device"

    def __init__(self, fd: int, size: int, handle: int, device: int) -> None:
        self.fd, self.size, self.handle, self.device = fd, size, handle, device
        self.address, self.stale = 0, False
        lib = _driver()
        address = ctypes.c_ulonglong()
        _check(lib.cuMemAddressReserve(ctypes.byref(address), size, 0, 0, 0), "cuMemAddressReserve")
        try:
            _check(lib.cuMemMap(address.value, size, 0, handle, 0), "cuMemMap")
            access = _AccessDesc(_Location(_ON_DEVICE, device), _READ_WRITE)
            _check(lib.cuMemSetAccess(address.value, size, ctypes.byref(access), 1), "cuMemSetAccess")
        except DeviceRegionUnavailable:
            lib.cuMemUnmap(address.value, size)
            lib.cuMemAddressFree(address.value, size)
            raise
        self.address = address.value
        try:
            self.bytes = torch.as_tensor(_Bytes(self.address, size), device=f"cuda:{device}")
        except (TypeError, RuntimeError) as exc:
            lib.cuMemUnmap(self.address, size)
            lib.cuMemAddressFree(self.address, size)
            self.address = 0
            raise DeviceRegionUnavailable(f"torch cannot view the mapped region ({exc})") from exc

    @classmethod
    def create(cls, size: int, pin: bool = True) -> DeviceRegion:  # noqa: ARG003 - `pin`: SharedRegion's signature
        """A new region of at least `size` bytes on the current GPU, with a descriptor to send the runner."""
        device = _current_context()
        lib = _driver()
        prop = _prop(device)
        granularity = ctypes.c_size_t()
        _check(lib.cuMemGetAllocationGranularity(ctypes.byref(granularity), ctypes.byref(prop), _GRANULARITY_MINIMUM),
               "cuMemGetAllocationGranularity")
        step = max(granularity.value, 1)
        size = max(step, -(-size // step) * step)
        handle = ctypes.c_ulonglong()
        _check(lib.cuMemCreate(ctypes.byref(handle), size, ctypes.byref(prop), 0), "cuMemCreate")
        fd = ctypes.c_int(-1)
        try:
            _check(lib.cuMemExportToShareableHandle(ctypes.byref(fd), handle.value, _POSIX_FD, 0),
                   "cuMemExportToShareableHandle")
            return cls(fd.value, size, handle.value, device)
        except BaseException:
            lib.cuMemRelease(handle.value)
            if fd.value >= 0:
                os.close(fd.value)
            raise

    @classmethod
    def attach(cls, fd: int, size: int, pin: bool = True) -> DeviceRegion:  # noqa: ARG003 - as SharedRegion's
        """The judge's region, from the descriptor it sent, mapped on this process's GPU."""
        if size <= 0:
            raise ValueError("a device region has no size")
        device = _current_context()
        lib = _driver()
        handle = ctypes.c_ulonglong()
        _check(lib.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd), _POSIX_FD),
               "cuMemImportFromShareableHandle")
        try:
            return cls(fd, size, handle.value, device)
        except BaseException:
            lib.cuMemRelease(handle.value)
            raise

    def probe(self) -> torch.Tensor:
        """Random bytes at the region's start, for the runner to echo (`echo`): the judge's proof that the
        runner's mapping and its own are the same memory, both ways, before any output goes through it."""
        generator = torch.Generator(device=self.bytes.device).manual_seed(random.SystemRandom().randrange(2**62))
        token = torch.randint(0, 256, (PROBE_BYTES,), dtype=torch.uint8, device=self.bytes.device,
                              generator=generator)  # its own generator: the judge's seeded draws stay as they were
        self.bytes[:PROBE_BYTES].copy_(token)
        self.bytes[PROBE_BYTES:2 * PROBE_BYTES].zero_()
        torch.cuda.synchronize(self.device)
        return token

    def echo(self) -> None:
        """The runner's side of `probe`: the bytes it sees at the start, reversed, written just after them."""
        self.bytes[PROBE_BYTES:2 * PROBE_BYTES].copy_(self.bytes[:PROBE_BYTES].flip(0))
        torch.cuda.synchronize(self.device)

    def echoed(self, token: torch.Tensor) -> bool:
        """Whether the runner's echo of `probe`'s token came back."""
        return bool(torch.equal(self.bytes[PROBE_BYTES:2 * PROBE_BYTES], token.flip(0)))

    def view(self, slot: TensorSlot) -> torch.Tensor:
        """The bytes of `slot` as a tensor on the GPU (no copy); raises ValueError if it does not fit."""
        end = slot.offset + slot.nbytes
        if slot.offset < 0 or end > self.size:
            raise ValueError(f"tensor of {slot.nbytes} bytes at {slot.offset} does not fit a region of {self.size}")
        return self.bytes[slot.offset:end].view(DTYPES[slot.dtype]).view(slot.shape)

    def put(self, offset: int, tensor: torch.Tensor) -> TensorSlot:
        """Copy `tensor` (any device) into the region at `offset`, finished before this returns."""
        from engine.wire.shared import dtype_name

        slot = TensorSlot(offset, dtype_name(tensor.dtype), list(tensor.shape))
        self.view(slot).copy_(tensor.detach().reshape(slot.shape))
        torch.cuda.synchronize(self.device)
        return slot

    def take(self, slot: TensorSlot, device: str) -> torch.Tensor:
        """A private copy of the tensor in `slot` on `device`, finished before this returns (the runner may
        write the region again as soon as the judge sends its next request)."""
        copy = self.view(slot).to(device, copy=True) if device != "cpu" else self.view(slot).cpu()
        torch.cuda.synchronize(self.device)
        return copy

    def zero(self) -> None:
        """Mark whatever a runner left here for erasing before the region serves the next one (`fresh`): the
        judge's cache calls this from a thread of its own, where a memset on the GPU could fall inside the
        next candidate's timing."""
        self.stale = True

    def fresh(self) -> None:
        """Erase the last runner's bytes, if any, on the judge's own thread before the region is lent again."""
        if self.stale:
            self.bytes.zero_()
            torch.cuda.synchronize(self.device)
            self.stale = False

    def close(self) -> None:
        if not self.address:
            return
        with contextlib.suppress(Exception):
            torch.cuda.synchronize(self.device)
        self.bytes = torch.empty(0, dtype=torch.uint8)
        lib = _driver()
        lib.cuMemUnmap(self.address, self.size)
        lib.cuMemAddressFree(self.address, self.size)
        lib.cuMemRelease(self.handle)
        self.address = 0
        with contextlib.suppress(OSError):
            os.close(self.fd)
