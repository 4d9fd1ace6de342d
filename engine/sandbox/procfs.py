"""Every process as /proc shows it: name, parent and CPU time so far. One cheap pass over /proc/*/stat,
read by the process-tree pinning (`engine.sandbox.affinity`) and the busy-process watch around a timing
(`engine.verify.host`); a process that ends mid-read is left out."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcStat:
    name: str
    parent: int
    ticks: int  # user + system CPU time, in clock ticks


def process_stats() -> dict[int, ProcStat]:
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        close = stat.rfind(b")")
        fields = stat[close + 2:].split()
        with contextlib.suppress(IndexError, ValueError):
            name = stat[stat.find(b"(") + 1:close].decode("utf-8", "replace")
            found[int(entry)] = ProcStat(name, int(fields[1]), int(fields[11]) + int(fields[12]))
    return found
