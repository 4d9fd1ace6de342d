"""The kernel's accounting around a block of trials: how long a process waited for a core.

The judge's clock around a block counts everything, including the moments the timed process sat
runnable while some other program had its core. On a loaded CPU that wait is most of what the clock
sees beyond the claimed times, and it swamps a patched timer's hidden work. The kernel counts it
(schedstat's run delay), so the judge leaves it out, on the candidate's side (descriptors the pool
opened on the host: the runner's main thread and its whole job's CPU time) and on its own (its own
threads).

Only waiting the job's own processes cannot explain is left out: a runner whose other threads or
children kept its main thread waiting used that CPU time itself (`ΔCPU of the rest of the job`), so
`waited = max(0, Δrun-delay(main) − Δ(job CPU − main CPU))`. Sleeping, blocking or spinning elsewhere
is never run delay, so it stays on the clock.

What run delay cannot show is a neighbour on another core slowing the timed loop through shared caches and
memory bandwidth. The machine's CPU pressure count (`stalled_us`) says when every core was taken; the clock
check then withholds speed instead of deciding (`clock.BUSY_STALL_SHARE`), never credits it.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    main_cpu_ns: int  # the timing thread's time on a core
    main_wait_ns: int  # its time runnable but waiting for a core
    job_cpu_ns: int  # every thread of every process of the job


def _read_fd(fd: int) -> str:
    return os.pread(fd, 4096, 0).decode("ascii", "replace")


def _schedstat(text: str) -> tuple[int, int]:
    cpu, wait = text.split()[:2]
    return int(cpu), int(wait)


def _job_cpu(text: str, fmt: str) -> int:
    if fmt == "v2":  # cpu.stat: "usage_usec N" among others
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) * 1000
        raise ValueError("cpu.stat without usage_usec")
    return int(text.split()[0])  # v1 cpuacct.usage: nanoseconds


class Meter:
    """Reads one process's accounting; `read()` is None once it cannot (the reading is then not used)."""

    def read(self) -> Reading | None:
        raise NotImplementedError


class RunnerMeter(Meter):
    """The runner's accounting through descriptors the pool opened outside the sandbox (the judge's
    job loop closes them after the job)."""

    def __init__(self, fds: list[int], layout: dict) -> None:
        self.schedstat = fds[int(layout["schedstat"])]
        self.job_cpu = fds[int(layout["job_cpu"])]
        self.fmt = str(layout.get("job_cpu_format", "v1"))

    def read(self) -> Reading | None:
        try:
            cpu, wait = _schedstat(_read_fd(self.schedstat))
            return Reading(cpu, wait, _job_cpu(_read_fd(self.job_cpu), self.fmt))
        except (OSError, ValueError):
            return None


class OwnMeter(Meter):
    """This process's accounting, for the judge's own baseline loop: the calling thread, and every thread
    of this process (the judge starts no processes while it times)."""

    def read(self) -> Reading | None:
        try:
            with open("/proc/thread-self/schedstat") as handle:
                cpu, wait = _schedstat(handle.read())
            total = 0
            for tid in os.listdir("/proc/self/task"):
                with contextlib.suppress(OSError, ValueError), open(f"/proc/self/task/{tid}/schedstat") as handle:
                    total += _schedstat(handle.read())[0]
            return Reading(cpu, wait, max(total, cpu))
        except (OSError, ValueError):
            return None


PRESSURE_FILE = "/proc/pressure/cpu"


def stalled_us() -> float | None:
    """The machine's CPU pressure-stall count ("some", µs since boot): time in which some task on the machine
    was runnable without a core. Then every core is taken, the other one too, and the timed loop's memory-bound
    untimed steps share caches and memory bandwidth with it: slower, with no run delay of the timed thread.
    None where the kernel keeps no count."""
    try:
        with open(PRESSURE_FILE) as handle:
            first = handle.readline().split()
        return float(next(word for word in first if word.startswith("total=")).removeprefix("total="))
    except (OSError, ValueError, StopIteration):
        return None


def stalled_by_others_us(stall_before: float | None, stall_after: float | None, before: Reading | None,
                         after: Reading | None, wall_us: float) -> float:
    """Microseconds of the machine's CPU stall between two readings that the timed job's own other threads and
    processes cannot explain (their CPU time is taken off, as for `waited_us`: a candidate that crowds its own
    core with helpers is not a busy machine), at most the wall time; 0 where any reading is missing."""
    if stall_before is None or stall_after is None or before is None or after is None:
        return 0.0
    return min(max(stall_after - stall_before - _others_cpu_ns(before, after) / 1000, 0.0), wall_us)


def waited_us(before: Reading | None, after: Reading | None) -> float:
    """Microseconds the main thread waited for a core that the rest of its own job did not use."""
    if before is None or after is None:
        return 0.0
    wait = after.main_wait_ns - before.main_wait_ns
    return max(0.0, (wait - _others_cpu_ns(before, after)) / 1000)


def _others_cpu_ns(before: Reading, after: Reading) -> int:
    """CPU time the job's other threads and processes ran between two readings (not its timing thread): what
    the job itself kept a core busy with, so no neighbour's doing."""
    return max((after.job_cpu_ns - before.job_cpu_ns) - (after.main_cpu_ns - before.main_cpu_ns), 0)
