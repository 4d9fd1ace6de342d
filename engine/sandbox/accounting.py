"""What the kernel counts of a sandboxed job, opened from outside it for the judge to read.

On a CPU the judge times a candidate with its own clock around each block of trials. Under load that
clock also counts the moments the candidate's process sat runnable while another program had its core:
neither the candidate's work nor anything it can hide work in. The kernel counts both for us: per
thread, the time on a core and the time waiting for one (`schedstat`); per job, the CPU time of
everything in it (its cgroup). These files are opened here, on the trusted side, and handed to the
judge as open descriptors: the judge is sandboxed and sees neither the host's /proc nor
/sys/fs/cgroup, and the candidate can neither write them nor point them elsewhere.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field

from engine.sandbox import affinity
from engine.sandbox.launch import SandboxProcess


@dataclass
class JobMeters:
    """Open, read-only descriptors of one job's accounting; `close` after handing them on."""

    fds: list[int] = field(default_factory=list)
    layout: dict[str, object] = field(default_factory=dict)  # what each descriptor is, by its index in `fds`

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []


def _namespace_pids(pid: int) -> list[int]:
    """The process's pid in each PID namespace it belongs to, outermost first (the NSpid line)."""
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return [int(p) for p in line.split()[1:]]
    except (OSError, ValueError):
        pass
    return []


def host_pid(job: SandboxProcess, inner_pid: int) -> int | None:
    """The host's pid of the job's process that calls itself `inner_pid` inside its namespace; only the
    job's own processes are considered, so a wrong claim can at most name another of them."""
    members = job.cgroup.pids() if job.cgroup is not None else set()
    members |= affinity.descendants([job.pid])
    for pid in sorted(members):
        names = _namespace_pids(pid)
        if names and names[-1] == inner_pid and (len(names) > 1 or pid == inner_pid):
            return pid
    return None


def open_job_meters(job: SandboxProcess, inner_pid: int) -> JobMeters | None:
    """The main thread's schedstat and the job's CPU time, opened for reading; None where this machine
    counts either not at all (no schedstat, no cgroup CPU accounting)."""
    usage = job.cgroup.cpu_usage() if job.cgroup is not None else None
    pid = host_pid(job, inner_pid)
    if usage is None or pid is None:
        return None
    meters = JobMeters()
    try:
        meters.fds.append(os.open(f"/proc/{pid}/task/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC))
        meters.fds.append(os.open(usage[0], os.O_RDONLY | os.O_CLOEXEC))
    except OSError:
        meters.close()
        return None
    meters.layout = {"schedstat": 0, "job_cpu": 1, "job_cpu_format": usage[1]}
    return meters
