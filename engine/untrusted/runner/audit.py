"""What candidate code tried to do beyond computing, as the runner reports it: processes, sockets,
writes outside its scratch folder, changes to the environment.

The OS boundary decides whether any of it succeeds (there is no network and nothing of value to
read or write); this hook (PEP 578) only records the attempts, as evidence beside the verdict. It is
installed once, records only while `watching()` is active and only in the thread that entered it.
A candidate that owns the process can silence it, which is why it is evidence and not a wall.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from dataclasses import dataclass, field

_PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork",
                   "os.forkpty", "pty.spawn")
_NETWORK_EVENTS = ("socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo")


@dataclass
class AuditState:
    write_roots: tuple[str, ...] = ()
    active: bool = False
    allow_processes: bool = False
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
    full = os.path.abspath(os.fsdecode(path))
    writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
        isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
    if writing and not _under(full, _STATE.write_roots) and not full.startswith("/dev/"):
        _record(f"opened {full} for writing")


def _hook(event: str, args: tuple) -> None:
    if not _STATE.active or threading.get_ident() != _STATE.thread:
        return
    if event == "open":
        _check_open(*(tuple(args) + (None, None))[:3])
    elif event.startswith(_PROCESS_EVENTS) and not _STATE.allow_processes:
        _record(f"started a process ({event}: {str(args[0])[:80] if args else ''})")
    elif event in _NETWORK_EVENTS:
        _record(f"network access ({event})")
    elif event in ("os.putenv", "os.unsetenv"):
        _record(f"changed the environment ({event} {os.fsdecode(args[0]) if args else ''})")


def install(write_roots: list[str]) -> None:
    """Install the hook (once per process) and set the folders candidate code may write."""
    global _INSTALLED
    _STATE.write_roots = tuple(os.path.abspath(p) for p in write_roots)
    if not _INSTALLED:
        sys.addaudithook(_hook)
        _INSTALLED = True


@contextlib.contextmanager
def watching(allow_processes: bool = False):
    """Record what the code inside touches (only in this thread); nests by keeping the outer settings."""
    previous = (_STATE.active, _STATE.allow_processes, _STATE.thread)
    _STATE.active, _STATE.allow_processes, _STATE.thread = True, allow_processes, threading.get_ident()
    try:
        yield
    finally:
        _STATE.active, _STATE.allow_processes, _STATE.thread = previous


def take_events() -> list[str]:
    """What was recorded since the last call."""
    events, _STATE.events = list(_STATE.events), []
    return events
