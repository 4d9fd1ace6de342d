"""Importing a KernelBench checkout, level by level, as `refinery problems import` does (target: levels 1-3,
250 files, <= 90 s together on a 2-core machine, memory bounded).

Prints per level the files, imported and rejected counts, seconds, seconds a file, and the peak memory of
the whole process tree (this process, the sandbox and every probe it forks), sampled every 0.1 s: the sum
of RSS (counts pages the forked probes share once per process, so it overstates) and the sum of PSS
(shared pages split among their users). Also the CPU seconds the import used (this process and the
sandbox) and those every other process on the machine used meanwhile, and the load average before and
after: on a shared machine the wall time depends on what else runs.

    python benchmarks/kernelbench_import.py PATH [--levels 1 2 3] [--json out.json]

PATH is a KernelBench checkout or its KernelBench/ folder. Imports go to a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path


def _descendants(root: int) -> list[int]:
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found, queue = [], [root]
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue += parents.get(pid, [])
    return found


def _memory_kb(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process in kB; zeros when it is gone or unreadable."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


class TreeMemory:
    """Samples the process tree's memory in a thread; `peak()` gives the highest sums seen (MB)."""

    def __init__(self, interval_s: float = 0.1) -> None:
        self.interval_s, self.rss_kb, self.pss_kb = interval_s, 0, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stop.is_set():
            sizes = [_memory_kb(pid) for pid in _descendants(os.getpid())]
            self.rss_kb = max(self.rss_kb, sum(s[0] for s in sizes))
            self.pss_kb = max(self.pss_kb, sum(s[1] for s in sizes))
            self.stop.wait(self.interval_s)

    def __enter__(self) -> TreeMemory:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()

    def peak(self) -> tuple[float, float]:
        return self.rss_kb / 1024, self.pss_kb / 1024


def _machine_busy_s() -> float:
    """CPU seconds every process on the machine has used since boot (busy columns of /proc/stat)."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_s() -> float:
    """CPU seconds of this process and of the children it waited for (not the sandbox's: those are killed
    at the end, unreaped by us; the probe server counts them)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class LevelResult:
    level: str
    files: int
    imported: int
    rejected: int
    seconds: float
    peak_rss_mb: float
    peak_pss_mb: float
    cpu_s: float  # ours: this process and the sandbox's
    others_cpu_s: float  # what every other process on the machine used meanwhile
    errors: list[str]
    notes: int


def import_level(folder: Path, dest: Path) -> LevelResult:
    from engine.problem_import import import_path
    from engine.problem_import.importer import KERNELBENCH_FILE
    from engine.problem_import.probe_batch import ProbeSession

    files = [p for p in folder.rglob("*.py") if KERNELBENCH_FILE.match(p.name)]
    with TreeMemory() as memory:
        busy, cpu, started = _machine_busy_s(), _own_cpu_s(), time.perf_counter()
        with ProbeSession() as session:  # what `refinery problems import` does: one session per import
            report = import_path(folder, dest_root=dest, session=session)
        seconds = time.perf_counter() - started
        cpu, busy = _own_cpu_s() - cpu + session.cpu_s, _machine_busy_s() - busy
    rss, pss = memory.peak()
    return LevelResult(folder.name, len(files), len(report.imported), len(report.errors), seconds, rss, pss,
                       cpu, max(0.0, busy - cpu), [str(e) for e in report.errors], len(report.notes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--levels", nargs="+", default=["1", "2", "3"])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    root = args.path / "KernelBench" if (args.path / "KernelBench").is_dir() else args.path
    cores, load_before = len(os.sched_getaffinity(0)), os.getloadavg()
    results = []
    with tempfile.TemporaryDirectory() as dest:
        for level in args.levels:
            result = import_level(root / f"level{level}", Path(dest) / f"level{level}")
            results.append(result)
            print(f"level{level}: {result.files} files, {result.imported} imported, {result.rejected} rejected, "
                  f"{result.seconds:.1f} s ({result.seconds / max(result.files, 1):.2f} s a file), peak tree "
                  f"RSS {result.peak_rss_mb:.0f} MB, PSS {result.peak_pss_mb:.0f} MB, {result.notes} notes; CPU "
                  f"{result.cpu_s:.1f} s ours, {result.others_cpu_s:.1f} s other processes",
                  flush=True)
            for error in result.errors:
                print(f"  rejected {error}")
    load_after = os.getloadavg()
    total = sum(r.seconds for r in results)
    files = sum(r.files for r in results)
    print(f"total: {files} files in {total:.1f} s; peak tree RSS {max(r.peak_rss_mb for r in results):.0f} MB, "
          f"PSS {max(r.peak_pss_mb for r in results):.0f} MB; {cores} cores, load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after")
    if args.json:
        args.json.write_text(json.dumps({"cores": cores, "load_before": load_before, "load_after": load_after,
                                         "levels": [asdict(r) for r in results]}, indent=2))


if __name__ == "__main__":
    main()
