"""Which cores a process may run on: read and set for a whole process tree or for this process, and
claims on cores that every verifier on this machine respects.

`os.sched_setaffinity` moves one thread. A process that already runs threads (a warm runner: torch's
pools, CUDA's helpers) is moved by moving each of them, and each of its descendants; threads and
processes started later inherit the mask of the thread that starts them. Claims are advisory file
locks, one per core, in the temporary folder: held while a verifier times on that core and dropped by
the kernel when the holder exits, so a second run process on the same machine sets other cores aside
instead of timing on the same ones.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path

from engine.sandbox.procfs import process_stats

CLAIMS_DIR = Path(tempfile.gettempdir()) / "refinery-cores"


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """'0-2,5' (the kernel's list format) → (0, 1, 2, 5); raises ValueError on anything else."""
    cpus: set[int] = set()
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        first, last = int(low), int(high or low)
        if first < 0 or last < first:
            raise ValueError(f"not a core range: {part!r}")
        cpus.update(range(first, last + 1))
    return tuple(sorted(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """(0, 1, 2, 5) → '0-2,5'."""
    ordered = sorted(set(cpus))
    ranges = []
    for _, run in itertools.groupby(enumerate(ordered), key=lambda pair: pair[1] - pair[0]):
        values = [cpu for _, cpu in run]
        ranges.append(str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}")
    return ",".join(ranges)


def siblings(cpus: Iterable[int]) -> dict[int, frozenset[int]]:
    """Each core's hardware threads sharing its physical core (itself included), from sysfs; a core
    whose topology cannot be read counts as a physical core of its own."""
    found = {}
    for cpu in cpus:
        path = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list")
        try:
            found[cpu] = frozenset(parse_cpu_list(path.read_text().strip())) | {cpu}
        except (OSError, ValueError):
            found[cpu] = frozenset({cpu})
    return found


# --- process trees ------------------------------------------------------------------------------------


def _parents() -> dict[int, int]:
    """pid → parent pid for every process visible in /proc."""
    return {pid: stat.parent for pid, stat in process_stats().items()}


def descendants(roots: Iterable[int], parents: dict[int, int] | None = None) -> set[int]:
    """The roots and every process below them."""
    parents = _parents() if parents is None else parents
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, stack = set(), [r for r in roots if r in parents]
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(children.get(pid, ()))
    return found


def _tasks(pid: int) -> list[int]:
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def pin_tree(root: int, cpus: Iterable[int]) -> int:
    """Move every thread of `root` and its descendants onto `cpus`; returns how many threads could not be
    moved (they ended meanwhile, or this process may not move them)."""
    mask, failed = set(cpus), 0
    for pid in descendants([root]):
        for tid in _tasks(pid):
            try:
                os.sched_setaffinity(tid, mask)
            except (ProcessLookupError, PermissionError, OSError):
                failed += 1
    return failed


def tree_cpus(root: int) -> frozenset[int]:
    """Every core some thread of the tree may run on (what the tree can reach, not what it was given)."""
    cpus: set[int] = set()
    for pid in descendants([root]):
        for tid in _tasks(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                cpus |= os.sched_getaffinity(tid)
    return frozenset(cpus)


def process_cpus(pid: int) -> frozenset[int] | None:
    """The cores a process may run on, as /proc says (readable for any process, unlike the syscall)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("Cpus_allowed_list:"):
                    return frozenset(parse_cpu_list(line.split(":", 1)[1].strip()))
    except (OSError, ValueError):
        return None
    return None


# --- this process ------------------------------------------------------------------------------------

_lock = threading.Lock()
_original: frozenset[int] | None = None  # this process's cores before anything here moved it
_keeps: dict[int, frozenset[int]] = {}
_tokens = itertools.count(1)


def usable_cpus() -> frozenset[int]:
    """The cores this process may use (cgroup cpuset and any taskset included), as they were before a
    verifier in this process moved its threads off its timing cores."""
    with _lock:
        return _original if _original is not None else frozenset(os.sched_getaffinity(0))


def _pin_self(cpus: frozenset[int]) -> None:
    for tid in _tasks(os.getpid()):
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.sched_setaffinity(tid, cpus)


def keep_process_on(cpus: Iterable[int]) -> int:
    """Move every thread of this process (and so whatever it starts later) onto `cpus`, until `release`
    of the returned token; with several holders, onto the cores all of them allow."""
    global _original
    with _lock:
        if _original is None:
            _original = frozenset(os.sched_getaffinity(0))
        token = next(_tokens)
        _keeps[token] = frozenset(cpus) & _original
        _apply()
        return token


def release_process(token: int) -> None:
    """Drop one holder's wish; with none left the process gets back every core it had."""
    global _original
    with _lock:
        if _keeps.pop(token, None) is None:
            return
        _apply()
        if not _keeps:
            _original = None


def _apply() -> None:
    mask = frozenset.intersection(*_keeps.values()) if _keeps else _original
    _pin_self(mask or _original)


# --- claims ------------------------------------------------------------------------------------------


class CoreClaims:
    """Cores this process times on, as locks other verifiers on the machine see; `release` (or exit) ends them."""

    def __init__(self, directory: Path = CLAIMS_DIR) -> None:
        self.directory = directory
        self.held: dict[int, int] = {}  # core → lock file descriptor

    def _open(self, cpu: int) -> int | None:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(PermissionError):
                os.chmod(self.directory, 0o1777)
            fd = os.open(self.directory / f"cpu{cpu}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            return None
        return fd

    def claim(self, cpu: int) -> bool:
        """Hold `cpu`; False only if another holder has it (where claims cannot be made, nobody can)."""
        return self._try(cpu) is not False

    def _try(self, cpu: int) -> bool | None:
        """True: held now; False: another holder has it; None: claims cannot be made here (nothing known)."""
        if cpu in self.held:
            return True
        fd = self._open(cpu)
        if fd is None:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self.held[cpu] = fd
        return True

    def taken_elsewhere(self, cpus: Iterable[int]) -> frozenset[int]:
        """Of `cpus`, those another holder claims now."""
        taken = set()
        for cpu in cpus:
            if cpu in self.held:
                continue
            state = self._try(cpu)
            if state:
                self.drop(cpu)
            elif state is False:
                taken.add(cpu)
        return frozenset(taken)

    def drop(self, cpu: int) -> None:
        fd = self.held.pop(cpu, None)
        if fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def release(self) -> None:
        for cpu in list(self.held):
            self.drop(cpu)
