"""Runtime watch on what candidate code touches: files, processes, sockets, native libraries.

A Python audit hook (PEP 578) sees every `open`, subprocess, socket and dlopen made through
Python. It is installed once per worker and only records while `watching()` is active — around
the candidate's import, construction and forward calls, never around the harness's own work.
Static rules catch most of this earlier; this is the check that does not depend on spelling.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

_SYSTEM_READ_ROOTS = ("/dev", "/proc", "/sys", "/usr", "/lib", "/lib64", "/opt", "/etc", "/run/nvidia")
_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                   "os.forkpty", "pty.spawn")
_NETWORK_EVENTS = ("socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo")


@dataclass
class AuditState:
    read_roots: tuple[str, ...] = ()
    write_roots: tuple[str, ...] = ()
    denied_roots: tuple[str, ...] = ()
    active: bool = False
    allow_processes: bool = False
    allow_dlopen: bool = True
    events: list[str] = field(default_factory=list)
    thread: int | None = None


_STATE = AuditState()
_INSTALLED = False


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _record(message: str) -> None:
    if len(_STATE.events) < 50 and message not in _STATE.events:
        _STATE.events.append(message)


def _check_open(path, mode, flags) -> None:
    if not isinstance(path, str | bytes | os.PathLike):
        return  # an fd
    text = os.fsdecode(path)
    full = os.path.abspath(text)
    writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
    if _under(full, _STATE.write_roots):
        return  # the job's scratch folder and the build caches
    if _under(full, _STATE.denied_roots):
        _record(f"opened {full} ({'write' if writing else 'read'})")
    elif writing:
        _record(f"wrote {full}")
    elif not _under(full, _STATE.read_roots + _SYSTEM_READ_ROOTS):
        _record(f"read {full}")


def _hook(event: str, args: tuple) -> None:
    if not _STATE.active or threading.get_ident() != _STATE.thread:
        return
    if event == "open":
        _check_open(*(tuple(args) + (None, None))[:3])
    elif event.startswith(_PROCESS_EVENTS) and not _STATE.allow_processes:
        _record(f"started a process ({event}: {str(args[0])[:80] if args else ''})")
    elif event in _NETWORK_EVENTS:
        _record(f"network access ({event})")
    elif event == "ctypes.dlopen" and not _STATE.allow_dlopen:
        _record(f"loaded a native library ({args[0] if args else ''})")
    elif event in ("os.putenv", "os.unsetenv"):
        _record(f"changed the environment ({event} {os.fsdecode(args[0]) if args else ''})")


def install(read_roots: list[Path], write_roots: list[Path], denied_roots: list[Path]) -> None:
    """Install the hook (once per process) and set the folders candidate code may read and write."""
    global _INSTALLED
    _STATE.read_roots = tuple(str(Path(p).resolve()) for p in read_roots)
    _STATE.write_roots = tuple(str(Path(p).resolve()) for p in write_roots)
    _STATE.denied_roots = tuple(str(Path(p).resolve()) for p in denied_roots)
    if not _INSTALLED:
        sys.addaudithook(_hook)
        _INSTALLED = True


def set_write_roots(write_roots: list[Path]) -> None:
    _STATE.write_roots = tuple(str(Path(p).resolve()) for p in write_roots)


@contextlib.contextmanager
def watching(allow_processes: bool = False, allow_dlopen: bool = True):
    """Record what the code inside touches (only in this thread); nests by keeping the outer settings."""
    previous = (_STATE.active, _STATE.allow_processes, _STATE.allow_dlopen, _STATE.thread)
    _STATE.active, _STATE.allow_processes, _STATE.allow_dlopen = True, allow_processes, allow_dlopen
    _STATE.thread = threading.get_ident()
    try:
        yield
    finally:
        _STATE.active, _STATE.allow_processes, _STATE.allow_dlopen, _STATE.thread = previous


def take_events() -> list[str]:
    """What was recorded since the last call."""
    events, _STATE.events = list(_STATE.events), []
    return events
