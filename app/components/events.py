"""Knows the newest event of each watched run folder, so the live view polls memory, not the disk.

A run process appends `events/{seq:08d}.json` after it stores a round. One watchdog observer per
server process (held in `st.cache_resource` by `app.components.data.get_watcher`) sees those files
appear and records the highest sequence number per folder; the Run page's fragment only compares
that number with the one it last drew. inotify does not see writes made by other hosts (NFS, SMB,
SSHFS, 9p, some container mounts) and has a watch limit, so such folders get a polling observer,
and every folder is also rescanned now and then in case an event was missed anyway.

No Streamlit here: observer threads must never call `st.*`.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from engine.runs.events import event_id_of

# Filesystems on which inotify misses changes made elsewhere.
REMOTE_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse.sshfs", "sshfs", "vboxsf", "fuse.gcsfuse", "lustre",
    "gpfs", "afs", "virtiofs",
})
RESCAN_EVERY_S = 3.0


def event_seq(path: str | os.PathLike) -> int | None:
    """The sequence number of an event file name (`engine.runs.events` names them), or None for anything else."""
    return event_id_of(path)


def scan_latest(folder: Path) -> int:
    """The highest sequence number present in `folder` (0 when it is empty or missing)."""
    latest = 0
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                seq = event_seq(entry.name)
                if seq is not None and seq > latest:
                    latest = seq
    except FileNotFoundError:
        return 0
    return latest


def filesystem_type(path: Path, mounts_file: Path = Path("/proc/mounts")) -> str | None:
    """The type of the filesystem holding `path`, from the longest matching mount point (Linux)."""
    try:
        lines = mounts_file.read_text().splitlines()
    except OSError:
        return None
    target, best, best_type = str(path.resolve()), "", None
    for line in lines:
        parts = line.split()
        if len(parts) < 3:
            continue
        mount_point = parts[1].replace("\\040", " ")
        inside = target == mount_point or target.startswith(mount_point.rstrip("/") + "/")
        if inside and len(mount_point) > len(best):
            best, best_type = mount_point, parts[2]
    return best_type


def needs_polling(path: Path) -> bool:
    fs_type = filesystem_type(path)
    return fs_type is not None and (fs_type in REMOTE_FILESYSTEMS or fs_type.startswith("nfs"))


class _FolderHandler(FileSystemEventHandler):
    def __init__(self, watcher: EventWatcher, folder: Path) -> None:
        self.watcher, self.folder = watcher, folder

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory:
            return
        path = getattr(event, "dest_path", "") or event.src_path
        seq = event_seq(os.fsdecode(path))
        if seq is not None:
            self.watcher.record(self.folder, seq)


class EventWatcher:
    """Highest event sequence number per watched folder, fed by watchdog (inotify or polling)."""

    def __init__(self, force_polling: bool = False, poll_interval_s: float = 0.2) -> None:
        self.force_polling = force_polling
        self.poll_interval_s = poll_interval_s
        self._lock = threading.Condition()
        self._latest: dict[Path, int] = {}
        self._scanned_at: dict[Path, float] = {}
        self._modes: dict[Path, str] = {}
        self._native: BaseObserver | None = None
        self._polling: BaseObserver | None = None
        self._stopped = False

    def _observer(self, polling: bool) -> BaseObserver:
        if polling:
            if self._polling is None:
                self._polling = PollingObserver(timeout=self.poll_interval_s)
                self._polling.start()
            return self._polling
        if self._native is None:
            observer = Observer()
            observer.start()
            self._native = observer
        return self._native

    def watch(self, folder: Path) -> str:
        """Start watching `folder` (created if missing); returns how: "inotify" (or the OS's API) or "polling"."""
        folder = Path(folder).resolve()
        with self._lock:
            if folder in self._modes:
                return self._modes[folder]
            if self._stopped:
                raise RuntimeError("the event watcher has been stopped")
            folder.mkdir(parents=True, exist_ok=True)
            polling = self.force_polling or needs_polling(folder)
            handler = _FolderHandler(self, folder)
            try:
                observer = self._observer(polling)
                observer.schedule(handler, str(folder), recursive=False)
            except OSError:  # inotify watch or instance limit reached: poll this folder instead
                observer = self._observer(True)
                observer.schedule(handler, str(folder), recursive=False)
            self._modes[folder] = type(observer).__name__.removesuffix("Observer").lower() or "native"
            self._latest[folder] = max(self._latest.get(folder, 0), scan_latest(folder))
            self._scanned_at[folder] = time.monotonic()
            return self._modes[folder]

    def record(self, folder: Path, seq: int) -> None:
        with self._lock:
            if seq > self._latest.get(folder, 0):
                self._latest[folder] = seq
                self._lock.notify_all()

    def latest(self, folder: Path) -> int:
        """The newest sequence number seen in `folder`, watching it first if needed."""
        folder = Path(folder).resolve()
        self.watch(folder)
        now = time.monotonic()
        if now - self._scanned_at.get(folder, 0.0) > RESCAN_EVERY_S:
            self._scanned_at[folder] = now
            self.record(folder, scan_latest(folder))
        with self._lock:
            return self._latest.get(folder, 0)

    def mode(self, folder: Path) -> str | None:
        return self._modes.get(Path(folder).resolve())

    def wait_for(self, folder: Path, after: int, timeout_s: float) -> int:
        """Block until an event newer than `after` arrives or the timeout passes (tests, benchmarks)."""
        folder = Path(folder).resolve()
        self.watch(folder)
        deadline = time.monotonic() + timeout_s
        with self._lock:
            while self._latest.get(folder, 0) <= after:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                self._lock.wait(remaining)
            return self._latest.get(folder, 0)

    def stop(self) -> None:
        """Stop and join the observer threads; called when Streamlit releases the cached resource."""
        with self._lock:
            self._stopped = True
        for observer in (self._native, self._polling):
            if observer is not None:
                observer.stop()
                observer.join(timeout=5)
