"""Starting one sandboxed job and ending it with everything it started.

`spawn` builds the bubblewrap command line from a `SandboxSpec` (what the job may see and use), runs
it through the limits launcher, and returns a `SandboxProcess`; `run` does the same for a command that
runs to completion (a compile, a probe) with a hard timeout, keeping only the head and the tail of what
it prints (`engine.sandbox.output`) and stopping it once it has printed more than an honest compile or
probe ever does. Ending a job kills its PID namespace's first process (the kernel then kills every
process in the namespace at once) and sweeps its cgroup, so nothing a candidate forked outlives the
job. A job can be started on given cores and moved to others later (`SandboxProcess.pin`), threads and
children included.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import random
import select
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from engine.sandbox import affinity, cgroups, scratch, seccomp, view
from engine.sandbox.capabilities import Boundary, boundary
from engine.sandbox.cgroups import JobCgroup
from engine.sandbox.limits import JobLimits, launcher_argv
from engine.sandbox.output import Drain

SCRATCH_INSIDE = "/scratch"
UID_BASE = int(os.environ.get("REFINERY_SANDBOX_UID_BASE", "61000"))
UID_SPAN = 2000
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
FLOOD_BYTES = 64 << 20  # output past which `run` stops a job: no compile or probe prints this much
_uid_lock = threading.Lock()
_uids_in_use: set[int] = set()
# Every sandbox is started from this one long-lived thread: "die with parent" follows the thread that
# forked a process, so a sandbox started from a short-lived worker thread would die with that thread.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-spawner")


@dataclass(frozen=True)
class Mount:
    """A host path shown at `target` inside (namespaced sandboxes only), read-only unless `writable`."""

    source: Path
    target: str
    writable: bool = False


@dataclass
class SandboxSpec:
    """One job's world. Paths are host paths, visible at the same place inside, except the scratch
    folder, which is `/scratch` inside a namespaced sandbox (HOME, TMPDIR and the working folder)."""

    argv: list[str]
    scratch: Path
    env: dict[str, str] = field(default_factory=dict)  # the whole environment inside, besides HOME/TMPDIR/PATH
    read_only: list[Path] = field(default_factory=list)
    writable: list[Path] = field(default_factory=list)
    mounts: list[Mount] = field(default_factory=list)  # shown elsewhere inside (namespaced sandboxes)
    files: dict[str, bytes] = field(default_factory=dict)  # created read-only inside (namespaced sandboxes)
    hidden: list[Path] = field(default_factory=list)  # never visible: the repository, the data folder
    gpu: bool = False
    python: bool = True
    limits: JobLimits = field(default_factory=JobLimits)
    role: str = "job"  # a label for logs; "judge" gets the first uid of the range
    cpus: tuple[int, ...] | None = None  # the cores the job runs on; None: those of the thread that starts it


def scratch_inside(spec: SandboxSpec, where: Boundary | None = None) -> str:
    where = where or boundary()
    return SCRATCH_INSIDE if where.namespaced else str(spec.scratch)


def _allocate_uid(role: str) -> int:
    with _uid_lock:
        if role == "judge":
            return UID_BASE
        free = [u for u in range(UID_BASE + 1, UID_BASE + UID_SPAN) if u not in _uids_in_use]
        uid = random.choice(free) if free else UID_BASE + 1
        _uids_in_use.add(uid)
        return uid


def _release_uid(uid: int) -> None:
    with _uid_lock:
        _uids_in_use.discard(uid)


def _memfd(name: str, content: bytes) -> int:
    fd = os.memfd_create(name, 0)
    os.write(fd, content)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@dataclass
class _Plan:
    argv: list[str]
    env: dict[str, str]
    fds: list[int]
    info_read: int | None
    uid: int | None


def _bwrap_args(spec: SandboxSpec, where: Boundary, uid: int | None) -> tuple[list[str], list[int], int]:
    inside = SCRATCH_INSIDE
    args = [where.bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if where.mode == "userns":
        args += ["--unshare-user", "--disable-userns"]
    else:
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    system = view.system_mounts()
    binds = [str(p) for p in (view.python_dirs(spec.hidden) if spec.python else [])]
    binds += [str(p) for p in spec.read_only if Path(p).exists()]
    writable = [str(p) for p in spec.writable]
    system_targets = [t for _, _, t in system] + list(spec.files) + ["/etc/passwd"]
    for folder in view.ancestors(system_targets):
        args += ["--perms", "0755", "--dir", folder]
    args += view.mount_args(system)
    # The kernel's file systems and the empty /tmp first, so a bind below /tmp lands on the new one.
    size = ["--size", str(spec.limits.scratch_mb << 20)] if where.tmpfs_size else []
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", *size, "--tmpfs", "/dev/shm",
             "--perms", "1777", *size, "--tmpfs", "/tmp", "--ro-bind", "/sys", "/sys"]
    user_targets = binds + writable + [m.target for m in spec.mounts] + [inside + "/x"]
    for folder in view.ancestors(user_targets):
        if folder not in ("/tmp", "/dev", "/proc", "/sys") and not folder.startswith(("/proc/", "/sys/", "/dev/")):
            args += ["--perms", "0755", "--dir", folder]
    for path in binds:
        args += ["--ro-bind", path, path]
    for path in writable:
        args += ["--bind", path, path]
    for mount in spec.mounts:
        args += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
    for masked in _masked(spec, binds + writable):
        args += ["--perms", "0700", "--tmpfs", masked]
    if spec.gpu:
        for device in view.gpu_device_paths():
            args += ["--dev-bind", device, device]
    args += ["--bind", str(spec.scratch), inside, "--chdir", inside]
    fds: list[int] = []
    gid = uid if uid is not None else os.getgid()
    files = {"/etc/passwd": view.passwd_text(uid if uid is not None else os.getuid(), gid).encode(),
             "/etc/group": view.group_text(gid).encode(), "/etc/hosts": view.HOSTS_TEXT.encode(), **spec.files}
    for path, content in files.items():
        fd = _memfd(Path(path).name, content)
        fds.append(fd)
        # world-readable: the sandbox's own user reads them (bubblewrap's default 0600 is root's alone,
        # and torch.compile's getpass.getuser() then fails with "uid not found")
        args += ["--perms", "0644", "--ro-bind-data", str(fd), path]
    if where.seccomp:
        fd = seccomp.program_fd()
        fds.append(fd)
        args += ["--seccomp", str(fd)]
    info_read, info_write = os.pipe()
    fds.append(info_write)
    args += ["--info-fd", str(info_write), "--"]
    if uid is not None:
        args += [where.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                 "--bounding-set=-all", "--no-new-privs"]
    return args, fds, info_read


def _masked(spec: SandboxSpec, same_path_binds: list[str]) -> list[str]:
    """Hidden folders that a bind would show (the data folder inside a bound tree): covered by an empty
    tmpfs, so nothing in a hidden folder is ever visible, whatever else is bound."""
    shown = [(Path(p).resolve(), p) for p in same_path_binds]
    shown += [(Path(m.source).resolve(), m.target) for m in spec.mounts]
    masked = []
    for hidden in spec.hidden:
        hidden = Path(hidden).resolve()
        for source, target in shown:
            if source in hidden.parents:
                masked.append(str(Path(target) / hidden.relative_to(source)))
    return list(dict.fromkeys(masked))


def _plan(spec: SandboxSpec, where: Boundary, cgroup: JobCgroup | None) -> _Plan:
    uid = _allocate_uid(spec.role) if where.own_user else None
    home = scratch_inside(spec, where)
    env = {"PATH": DEFAULT_PATH, "LANG": "C.UTF-8", **spec.env, "HOME": home, "TMPDIR": f"{home}/tmp",
           "TMP": f"{home}/tmp", "TEMP": f"{home}/tmp"}
    (spec.scratch / "tmp").mkdir(parents=True, exist_ok=True)
    if uid is not None:
        for folder in (spec.scratch, spec.scratch / "tmp", *spec.writable,
                       *[m.source for m in spec.mounts if m.writable]):
            os.chown(folder, uid, uid)
    rlimits = spec.limits.rlimits(whole_job_memory=cgroup is not None, gpu=spec.gpu)
    procs = [str(f) for f in cgroup.procs_files] if cgroup else []
    if where.namespaced:
        prefix, fds, info_read = _bwrap_args(spec, where, uid)
        argv = launcher_argv(procs, rlimits, [*prefix, *spec.argv], spec.cpus)
        return _Plan(argv, env, fds, info_read, uid)
    return _Plan(launcher_argv(procs, rlimits, spec.argv, spec.cpus), env, [], None, uid)


@dataclass
class SandboxProcess:
    """A running sandboxed job. `close()` ends it and everything it started; idempotent."""

    popen: subprocess.Popen
    spec: SandboxSpec
    where: Boundary
    cgroup: JobCgroup | None
    uid: int | None
    info_read: int | None
    init_pid: int | None = None
    closed: bool = False

    @property
    def pid(self) -> int:
        return self.popen.pid

    def _read_init_pid(self, wait_s: float = 0.0) -> int | None:
        if self.init_pid is not None or self.info_read is None:
            return self.init_pid
        ready, _, _ = select.select([self.info_read], [], [], wait_s)
        if ready:
            with contextlib.suppress(OSError, ValueError, json.JSONDecodeError):
                data = os.read(self.info_read, 4096)
                if data:
                    self.init_pid = int(json.loads(data.decode()).get("child-pid"))
        return self.init_pid

    def poll(self) -> int | None:
        return self.popen.poll()

    def pin(self, cpus: tuple[int, ...]) -> int:
        """Move the job, every thread of every process in it, onto `cpus`; returns how many threads could
        not be moved. Threads and processes it starts afterwards inherit the cores."""
        return affinity.pin_tree(self.popen.pid, cpus)

    def cpus(self) -> frozenset[int]:
        """Every core some thread of the job may run on now."""
        return affinity.tree_cpus(self.popen.pid)

    def wait(self, timeout: float | None = None) -> int:
        return self.popen.wait(timeout)

    def _members(self) -> set[int]:
        members = affinity.descendants([self.popen.pid])
        if self.cgroup is not None:
            members |= self.cgroup.pids()
        return members

    def pause(self) -> None:
        """Stop every process of the job where it stands (SIGSTOP; `resume` continues them): a job that
        must not run beside something else for a moment, without losing what it has done."""
        for pid in self._members():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGSTOP)

    def resume(self) -> None:
        for pid in self._members():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGCONT)

    def kill(self, wait: bool = True) -> None:
        """Kill the namespace's first process (so every process in it), the launcher, and the cgroup; `wait`:
        until the cgroup is empty (`close` always waits)."""
        init = self._read_init_pid(0.2)
        if init is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(init, signal.SIGKILL)
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                self.popen.kill()
        if self.cgroup is not None:
            self.cgroup.kill_all(wait)

    def exit_detail(self) -> str:
        code = self.popen.returncode
        if code is None:
            text = "still running"
        elif code < 0:
            try:
                text = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                text = f"killed by signal {-code}"
        elif code > 128 and self.where.namespaced:
            try:
                text = f"killed by {signal.Signals(code - 128).name}"
            except ValueError:
                text = f"exited with status {code}"
        else:
            text = f"exited with status {code}"
        if self.cgroup is not None and self.cgroup.memory_limit_hit():
            text += f"; it reached its memory limit of {self.spec.limits.memory_mb} MB"
        if self.cgroup is not None and self.cgroup.process_limit_hit():
            text += f"; it reached its limit of {self.spec.limits.processes} processes"
        if scratch.full(self.spec.scratch):
            text += f"; its scratch folder is full (its quota is {self.spec.limits.scratch_mb} MB)"
        return text

    def close(self) -> None:
        if self.closed:
            return
        self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=10)
        if self.cgroup is not None:
            self.cgroup.close()
        if self.info_read is not None:
            with contextlib.suppress(OSError):
                os.close(self.info_read)
        if self.uid is not None:
            _release_uid(self.uid)
        self.closed = True

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@functools.cache
def _sweep_once() -> None:
    """What killed processes of ours left (job cgroups, scratch folders), removed before this process's first
    job; those of live processes are kept."""
    sweep_leftovers()


def sweep_leftovers(root: Path | None = None) -> tuple[list[Path], list[Path]]:
    """Remove the job cgroups, and the scratch folders under `root` (default: the usual one), whose maker no
    longer runs; (the cgroups, the folders) removed."""
    return cgroups.sweep(), scratch.sweep(root)


def spawn(spec: SandboxSpec, *, stdin=None, stdout=None, stderr=None, pass_fds: tuple[int, ...] = (),
          where: Boundary | None = None) -> SandboxProcess:
    """Start the job; its stdio as for `subprocess.Popen`, `pass_fds` reach the job at the same numbers."""
    where = where or boundary()
    _sweep_once()
    spec.scratch.mkdir(parents=True, exist_ok=True)
    cgroup = JobCgroup.create(spec.limits.memory_mb, spec.limits.processes) if where.cgroup else None
    plan = _plan(spec, where, cgroup)
    try:
        popen = _SPAWNER.submit(subprocess.Popen, plan.argv, stdin=stdin, stdout=stdout, stderr=stderr, env=plan.env,
                                cwd=spec.scratch, pass_fds=(*plan.fds, *pass_fds), start_new_session=True).result()
    except BaseException:
        if cgroup is not None:
            cgroup.close()
        if plan.uid is not None:
            _release_uid(plan.uid)
        raise
    finally:
        for fd in plan.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
    return SandboxProcess(popen, spec, where, cgroup, plan.uid, plan.info_read)


@dataclass(frozen=True)
class SandboxRun:
    returncode: int | None
    stdout: bytes  # bounded: head and tail, with a line saying how much was left out between
    stderr: bytes
    timed_out: bool
    seconds: float
    detail: str  # "exited with status 0", "killed by SIGKILL; it reached its memory limit of …"
    flooded: bool = False  # stopped because it printed more than `run`'s `flood_bytes`


def _feed(pipe, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the job closed its end or ended: what it did not read is its loss
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


def run(spec: SandboxSpec, *, timeout_s: float, input: bytes | None = None, where: Boundary | None = None,
        flood_bytes: int = FLOOD_BYTES) -> SandboxRun:
    """Run a job to completion (or kill it at `timeout_s`), collecting the head and tail of its output; a job
    that prints more than `flood_bytes` (stdout and stderr together) is stopped there."""
    started = time.monotonic()
    with spawn(spec, stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, stdout=subprocess.PIPE,
               stderr=subprocess.PIPE, where=where) as job:
        stop = threading.Event()
        flooded = threading.Event()
        drains: list[Drain] = []

        def watch(_: int) -> None:
            if sum(d.buffer.total for d in drains) > flood_bytes and not flooded.is_set():
                flooded.set()
                stop.set()

        drains += [Drain(os.dup(job.popen.stdout.fileno()), watch=watch, name="sandbox-stdout"),
                   Drain(os.dup(job.popen.stderr.fileno()), watch=watch, name="sandbox-stderr")]
        job.popen.stdout.close()
        job.popen.stderr.close()
        for drain in drains:
            drain.start()
        if input is not None:
            threading.Thread(target=_feed, args=(job.popen.stdin, input), name="sandbox-stdin", daemon=True).start()
        threading.Thread(target=lambda: (job.popen.wait(), stop.set()), name="sandbox-wait", daemon=True).start()
        stop.wait(timeout_s)
        timed_out = job.popen.poll() is None and not flooded.is_set()
        if job.popen.poll() is None:
            job.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            job.popen.wait(timeout=10)
        if flooded.is_set():
            detail = f"stopped after printing more than {flood_bytes >> 20} MiB"
        else:
            detail = f"killed after {timeout_s:.0f} s" if timed_out else job.exit_detail()
        job.close()  # every process of the job ends, so its pipes reach their end
        out, err = (drain.finish() for drain in drains)
        return SandboxRun(job.popen.returncode, out, err, timed_out, time.monotonic() - started, detail,
                          flooded.is_set())
