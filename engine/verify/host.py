"""What the machine was doing while a candidate was timed: the record every evaluation carries.

A time is only as good as the core it was measured on. The pool watches each job from outside the
sandboxes (they cannot see the host's processes): which cores the job's processes could run on, the
machine's load, every other process's CPU use over the timing window (one pass over /proc at each end:
cheap, and on a core the timing does not use), and how many other evaluations of this pool were in
flight. `summary` is the line a user reads under the verdict; `notes_for` adds a warning
when a CPU timing shared its cores with busy processes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping

from engine.sandbox.affinity import descendants, format_cpu_list, process_cpus
from engine.sandbox.procfs import ProcStat, process_stats
from engine.schema.evaluation import NOISY_HOST, BusyProcess, HostRecord

BUSY_PCT = 5.0  # of one core over the window: below this a process is not named
BUSY_KEPT = 5  # names kept, busiest first
WARN_PCT = 10.0  # busy processes that may share the timing cores, together: a CPU timing is doubtful
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def summary(record: HostRecord) -> str:
    """One line: 'timed on core 3 (exclusive); load 0.40; nothing else busy'."""
    verb = "timed" if record.window == "timing" else "ran"
    many = len(record.cores) != 1
    where = f"core{'s' if many else ''} {format_cpu_list(record.cores)}" if record.cores else "unknown cores"
    text = f"{verb} on {where} (exclusive)" if record.exclusive else f"{verb} on shared {where}"
    if record.load_avg:
        text += f"; load {record.load_avg[0]:.2f}"
    text += "; " + (", ".join(_busy_words(b) for b in record.busy_others) + " busy" if record.busy_others
                    else "nothing else busy")
    if record.in_flight:
        text += f"; {record.in_flight} other evaluation{'s' if record.in_flight != 1 else ''} in flight"
    return text


def _busy_words(busy: BusyProcess) -> str:
    count = f" ×{busy.processes}" if busy.processes > 1 else ""
    away = "" if busy.shares_cores else " (other cores)"
    return f"{busy.name}{count} {busy.cpu_pct:.0f} %{away}"


def notes_for(record: HostRecord | None, clock: str | None) -> list[str]:
    """The notes a timed result gets: where it was timed, and for a CPU timing whether it had the cores
    to itself (on a GPU the events time the device; the host line is still worth reading)."""
    if record is None or clock is None:
        return []
    notes = [summary(record)]
    interfering = record.interfering
    if clock == "perf-counter" and sum(b.cpu_pct for b in interfering) >= WARN_PCT:
        names = ", ".join(_busy_words(b) for b in interfering)
        notes.append(f"CPU timing {NOISY_HOST} with busy processes ({names}): these times are less "
                     "trustworthy; re-measure on a quiet machine or set timing_cores")
    return notes


# --- watching ------------------------------------------------------------------------------------------


def _scan() -> dict[int, ProcStat]:
    """Every process's name, parent and CPU time so far (user + system, in clock ticks)."""
    return process_stats()


def _program(name: str) -> str:
    """Kernel threads by kind ('kworker/1:2-events' → 'kworker'); programs by their own name."""
    return name.split("/", 1)[0] or name


def _load() -> list[float]:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except OSError:
        return []


class HostWatch:
    """CPU use of everything outside one job, over the timing window (or the whole job if it never timed).

    `job_roots`: the job's own processes (judge and runner; their descendants too), left out. `reach`:
    the cores the job can reach now, read again when the window closes (a candidate may widen its own
    affinity: then its cores are no longer exclusive, and the record says where it could run).
    `labels`: processes of ours, with their descendants, named by role rather than by program ("warming
    runner"); this process itself is "verifier" (what it starts keeps its own name: "cc1", "nvcc").
    """

    def __init__(self, job_roots: Iterable[int], cores: Iterable[int], exclusive: bool, setup: str = "",
                 labels: Mapping[int, str] | None = None, reach: Callable[[], Iterable[int]] | None = None
                 ) -> None:
        self.job_roots, self.labels, self.reach = list(job_roots), dict(labels or {}), reach
        self.cores, self.exclusive, self.setup = sorted(cores), exclusive, setup
        self.seen: HostRecord | None = None
        self.begin("job")

    def begin(self, window: str) -> None:
        """Open a window now (the previous one is forgotten)."""
        self.window, self.started, self.before, self.seen = window, time.monotonic(), _scan(), None

    def end(self) -> None:
        """Close the window now; `finish` returns what it saw."""
        if self.seen is None:
            self.seen = self._observe()

    def finish(self) -> HostRecord:
        """The record of the window: closed by `end`, or by this call."""
        self.end()
        return self.seen

    def _observe(self) -> HostRecord:
        seconds = max(time.monotonic() - self.started, 1e-3)
        after = _scan()
        parents = {pid: p.parent for pid, p in after.items()}
        own = descendants(self.job_roots, parents)
        labelled = {pid: label for root, label in self.labels.items() for pid in descendants([root], parents)}
        labelled[os.getpid()] = "verifier"
        usage: dict[str, list[tuple[int, float]]] = {}
        total = 0.0
        for pid, proc in after.items():
            if pid in own:
                continue
            earlier = self.before.get(pid)
            ticks = proc.ticks - (earlier.ticks if earlier is not None and earlier.name == proc.name else 0)
            if ticks <= 0:
                continue
            pct = 100.0 * ticks / _TICKS / seconds
            total += pct
            usage.setdefault(labelled.get(pid) or _program(proc.name), []).append((pid, pct))
        cores, exclusive = self.cores, self.exclusive
        widened = set(self.reach() if self.reach is not None else ()) - set(cores)
        if widened:
            cores, exclusive = sorted(set(cores) | widened), False
        return HostRecord(cores, exclusive, self.setup, self.window, round(seconds, 3), _load(),
                          round(total, 1), self._busy(usage, frozenset(cores)))

    @staticmethod
    def _busy(usage: dict[str, list[tuple[int, float]]], cores: frozenset[int]) -> list[BusyProcess]:
        busy = []
        for name, items in usage.items():
            pct = sum(p for _, p in items)
            if pct < BUSY_PCT:
                continue
            reach = [process_cpus(pid) for pid, _ in items]
            shares = any(cpus is None or bool(cpus & cores) for cpus in reach) if cores else True
            busy.append(BusyProcess(name, round(pct, 1), len(items), shares))
        busy.sort(key=lambda b: -b.cpu_pct)
        return busy[:BUSY_KEPT]
