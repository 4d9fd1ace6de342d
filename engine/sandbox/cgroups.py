"""Memory and process-count limits for a whole sandboxed job, through a control group of its own.

A per-process limit (RLIMIT_AS) does not stop a job that splits its memory over children, and
RLIMIT_NPROC counts a user's processes everywhere; a control group counts the job and only the
job. Both hierarchies are handled: cgroup v2 (one folder with memory.max and pids.max) and v1
(one folder under the memory controller and one under pids). Where neither can be written (no
root, a read-only /sys/fs/cgroup) `JobCgroup.create` returns None and the caller says so.

A job's group is named after the process that made it (`engine.sandbox.owners`): `sweep` removes the
groups a killed process left behind, with anything still in them, and never one of a live process.

The group also counts the CPU time of everything in the job (v2: cpu.stat, always there; v1: a folder
under cpuacct, where that controller is mounted), which the judge reads to tell a candidate's own work
from waiting for a core (`engine.sandbox.accounting`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from engine.sandbox import owners

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP_NAME = "refinery-sandbox"
KILL_ROUNDS = 50


def _own_path(controller: str | None) -> str:
    """This process's cgroup path in the v2 hierarchy (controller None) or a v1 controller's."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return "/"
    for line in lines:
        _, names, path = line.split(":", 2)
        if (controller is None and names == "") or (controller and controller in names.split(",")):
            return path
    return "/"


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def _v2_root() -> Path | None:
    """The v2 mount with the memory and pids controllers available, or None."""
    for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        controllers = mount / "cgroup.controllers"
        try:
            available = set(controllers.read_text().split())
        except OSError:
            continue
        if {"memory", "pids"} <= available:
            return mount
    return None


def _enable_controllers(folder: Path) -> bool:
    try:
        (folder / "cgroup.subtree_control").write_text("+memory +pids")
        return True
    except OSError:
        return False


def _v2_parent() -> Path | None:
    """A folder under which job cgroups can be made with memory and pids enabled."""
    root = _v2_root()
    if root is None:
        return None
    for base in (root / _own_path(None).lstrip("/"), root):
        parent = base / GROUP_NAME
        try:
            parent.mkdir(exist_ok=True)
        except OSError:
            continue
        if _enable_controllers(base) and _enable_controllers(parent):
            return parent
    return None


def _v1_parents() -> tuple[Path, Path] | None:
    parents = []
    for controller in ("memory", "pids"):
        mount = CGROUP_ROOT / controller
        if not _writable_dir(mount):
            return None
        made = None
        for base in (mount / _own_path(controller).lstrip("/"), mount):
            try:
                (base / GROUP_NAME).mkdir(exist_ok=True)
                made = base / GROUP_NAME
                break
            except OSError:
                continue
        if made is None:
            return None
        parents.append(made)
    return parents[0], parents[1]


def _v1_cpu_folder(name: str) -> Path | None:
    """A job folder under the v1 cpuacct controller, or None where it is not mounted or not writable
    (the job then runs without CPU accounting; its limits do not depend on it)."""
    mount = CGROUP_ROOT / "cpuacct"
    if not _writable_dir(mount):
        return None
    for base in (mount / _own_path("cpuacct").lstrip("/"), mount):
        folder = base / GROUP_NAME / name
        try:
            folder.mkdir(parents=True)
            return folder
        except OSError:
            continue
    return None


def availability() -> str | None:
    """'v2', 'v1' or None: which kind of job cgroup this process can make."""
    if _v2_parent() is not None:
        return "v2"
    if _v1_parents() is not None:
        return "v1"
    return None


@dataclass
class JobCgroup:
    """The cgroup folders of one job; `add` a process before it runs anything, `close` at the end."""

    version: str
    folders: list[Path] = field(default_factory=list)
    cpu_folder: Path | None = None  # v1 only: the job's folder under cpuacct (v2 counts in folders[0])

    @classmethod
    def create(cls, memory_mb: int, processes: int) -> JobCgroup | None:
        name = f"job-{owners.tag()}-{uuid.uuid4().hex[:8]}"  # the maker, for `sweep`
        parent = _v2_parent()
        group = None
        try:
            if parent is not None:
                folder = parent / name
                folder.mkdir()
                group = cls("v2", [folder])
                (folder / "memory.max").write_text(str(memory_mb * 2**20))
                with contextlib.suppress(OSError):
                    (folder / "memory.swap.max").write_text("0")
                (folder / "pids.max").write_text(str(processes))
                return group
            parents = _v1_parents()
            if parents is None:
                return None
            memory, pids = parents[0] / name, parents[1] / name
            memory.mkdir()
            pids.mkdir()
            group = cls("v1", [memory, pids], _v1_cpu_folder(name))
            (memory / "memory.limit_in_bytes").write_text(str(memory_mb * 2**20))
            with contextlib.suppress(OSError):  # no swap accounting on this kernel: the RAM limit still holds
                (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_mb * 2**20))
            (pids / "pids.max").write_text(str(processes))
            return group
        except OSError:
            if group is not None:
                group.close()
            return None

    @property
    def procs_files(self) -> list[Path]:
        """Every cgroup.procs a process of the job is written to, before it runs anything."""
        extra = [self.cpu_folder] if self.cpu_folder is not None else []
        return [folder / "cgroup.procs" for folder in [*self.folders, *extra]]

    def cpu_usage(self) -> tuple[Path, str] | None:
        """The file with the whole job's CPU time and how to read it: ('cpu.stat' path, 'v2') or
        ('cpuacct.usage' path, 'v1'); None where this machine does not count it."""
        if self.version == "v2":
            return self.folders[0] / "cpu.stat", "v2"
        if self.cpu_folder is not None:
            return self.cpu_folder / "cpuacct.usage", "v1"
        return None

    def add(self, pid: int) -> None:
        for procs in self.procs_files:
            procs.write_text(str(pid))

    def pids(self) -> set[int]:
        members: set[int] = set()
        for folder in [*self.folders, *([self.cpu_folder] if self.cpu_folder else [])]:
            with contextlib.suppress(OSError, ValueError):
                members |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
        return members

    def kill_all(self, wait: bool = True) -> None:
        """SIGKILL every member until none is left (a fork racing the sweep is caught next round); `wait=False`:
        one round, not waiting for the members to be gone (a process with a CUDA context takes a tenth of a
        second or more to exit after its kill, in the driver: it runs none of its own code meanwhile)."""
        kill_file = self.folders[0] / "cgroup.kill"
        if self.version == "v2" and kill_file.exists():
            with contextlib.suppress(OSError):
                kill_file.write_text("1")
        for _ in range(KILL_ROUNDS if wait else 1):
            members = self.pids()
            if not members:
                return
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if wait:
                time.sleep(0.01)

    def memory_limit_hit(self) -> bool:
        """Whether the job ran into its memory limit (the kernel's OOM killer or a failed charge)."""
        folder = self.folders[0]
        try:
            if self.version == "v2":
                events = dict(line.split() for line in (folder / "memory.events").read_text().splitlines())
                return int(events.get("oom_kill", 0)) > 0 or int(events.get("max", 0)) > 0
            return int((folder / "memory.failcnt").read_text()) > 0
        except (OSError, ValueError):
            return False

    def process_limit_hit(self) -> bool:
        folder = self.folders[-1]
        try:
            if self.version == "v2":
                events = dict(line.split() for line in (folder / "pids.events").read_text().splitlines())
                return int(events.get("max", 0)) > 0
            return int((folder / "pids.events").read_text().split()[-1]) > 0
        except (OSError, ValueError, IndexError):
            return False

    def close(self) -> None:
        """Kill what is left and remove the folders."""
        self.kill_all()
        for folder in [*self.folders, *([self.cpu_folder] if self.cpu_folder else [])]:
            for _ in range(20):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _parents() -> list[Path]:
    """Every folder job groups are made in, for this process's place in each hierarchy."""
    found = []
    for mount, controller in ((CGROUP_ROOT, None), (CGROUP_ROOT / "unified", None), (CGROUP_ROOT / "memory", "memory"),
                              (CGROUP_ROOT / "pids", "pids"), (CGROUP_ROOT / "cpuacct", "cpuacct")):
        for base in (mount / _own_path(controller).lstrip("/"), mount):
            if (base / GROUP_NAME).is_dir():
                found.append(base / GROUP_NAME)
    return list(dict.fromkeys(found))


def sweep() -> list[Path]:
    """Kill what is left in, and remove, every job group whose maker no longer runs; returns them."""
    removed = []
    for parent in _parents():
        try:
            entries = [e for e in parent.iterdir() if e.is_dir()]
        except OSError:
            continue
        for folder in entries:
            if not owners.gone(folder.name):
                continue
            version = "v2" if (folder / "cgroup.kill").exists() or (folder / "memory.max").exists() else "v1"
            JobCgroup(version, [folder]).close()
            if not folder.exists():
                removed.append(folder)
    return removed
