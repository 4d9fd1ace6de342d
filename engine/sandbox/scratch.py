"""Scratch folders for sandboxed jobs: a quota while the job runs, and nothing left behind afterwards.

Each folder (`make`, or `folder` as a context manager) is a tmpfs of its own, limited to the job's
`scratch_mb`, mounted where the job sees its scratch: a job that writes past it gets "No space left on
device" for that write, and the host's disk never fills (a candidate wrote 3 GiB in 8 s before). Its
pages count against the job's memory too while it runs, and are given back at once when the folder is
removed (`remove`: unmount, then delete). Mounting takes root; where this process cannot, the folder is
an ordinary one, bounded per file only, and the boundary says so (`quota_available`).

Folders are named after the process that made them (`engine.sandbox.owners`), so `sweep` can remove
those of a process that was killed before it could clean up, and never one of a live process.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from engine.sandbox import owners

MS_NOSUID, MS_NODEV = 2, 4
MNT_DETACH = 2
FSTYPE = "tmpfs"
SOURCE = "refinery-scratch"  # the device name of every scratch tmpfs, so ours are told from others'


def default_root() -> Path:
    return Path(tempfile.gettempdir()) / f"refinery-sandbox-{os.getuid()}"


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _mount(folder: Path, size_mb: int) -> None:
    options = f"size={int(size_mb)}m,mode=0700".encode()
    if _libc().mount(SOURCE.encode(), str(folder).encode(), FSTYPE.encode(), MS_NOSUID | MS_NODEV, options) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"cannot mount a tmpfs on {folder}: {os.strerror(errno)}")


def _unmount(folder: Path) -> None:
    _libc().umount2(str(folder).encode(), MNT_DETACH)


@functools.cache
def quota_available() -> str | None:
    """None if this process can give a job's scratch a quota; else why not, in words."""
    if os.geteuid() != 0:
        return "not root: cannot mount a size-limited tmpfs"
    probe = Path(tempfile.mkdtemp(prefix="refinery-quota-probe-"))
    try:
        _mount(probe, 1)
        _unmount(probe)
        return None
    except OSError as exc:
        return str(exc.strerror or exc)
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def _mounted_below(folder: Path) -> list[Path]:
    """Mount points at or below `folder`, deepest first (from /proc/self/mountinfo)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    prefix = str(folder)
    points = []
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = fields[4].encode().decode("unicode_escape")  # "\040" for a space
            if point == prefix or point.startswith(prefix + "/"):
                points.append(Path(point))
    return sorted(points, key=lambda p: len(p.parts), reverse=True)


def make(prefix: str, root: Path | None = None, quota_mb: int | None = None) -> Path:
    """A fresh scratch folder `<root>/<prefix>-<pid>-<start>-XXXX`, on a tmpfs of `quota_mb` MB where this
    process can mount one (None: no quota)."""
    root = Path(root or default_root())
    root.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(root, 0o711)
    made = Path(tempfile.mkdtemp(prefix=f"{prefix}-{owners.tag()}-", dir=root))
    if quota_mb is not None and quota_available() is None:
        try:
            _mount(made, quota_mb)
        except OSError:
            made.rmdir()
            raise
    return made


def remove(folder: Path) -> None:
    """Unmount the folder's tmpfs (its pages are freed at once) and delete what is left."""
    folder = Path(folder)
    for point in _mounted_below(folder):
        _unmount(point)
    shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def folder(prefix: str, root: Path | None = None, quota_mb: int | None = None) -> Iterator[Path]:
    made = make(prefix, root, quota_mb)
    try:
        yield made
    finally:
        remove(made)


def full(folder: Path) -> bool:
    """Whether `folder` is a scratch tmpfs with no room left (a job that wrote up to its quota)."""
    try:
        stat = os.statvfs(folder)
    except OSError:
        return False
    return os.path.ismount(folder) and stat.f_bavail == 0


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders under `root` whose maker no longer runs; returns them."""
    root = Path(root or default_root())
    try:
        entries = list(root.iterdir())
    except OSError:
        return []
    removed = []
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink() and owners.gone(entry.name):
            remove(entry)
            removed.append(entry)
    return removed
