"""Which process of ours made a scratch folder or a job cgroup, and whether it still runs.

Both are named `<prefix>-<pid>-<start>-<suffix>`: the maker's pid and its start time in clock ticks since
boot (/proc/PID/stat), so a pid the kernel has since given to another process is not taken for the
maker. A process killed before it could clean up (SIGKILL, a crash) leaves its folders and cgroups
behind; the next process of ours removes those whose maker is gone, and nothing of a live one.
"""

from __future__ import annotations

import functools
import os
import re

_NAME = re.compile(r"^(?P<prefix>[a-z]+(?:-[a-z]+)*)-(?P<pid>\d+)-(?P<start>\d+)-[A-Za-z0-9_]+$")


def start_ticks(pid: int) -> int | None:
    """When `pid` started, in clock ticks since boot; None when no such process exists."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return None
    try:
        return int(stat[stat.rfind(b")") + 2:].split()[19])
    except (IndexError, ValueError):
        return None


@functools.cache
def _own_tag(pid: int) -> str:
    return f"{pid}-{start_ticks(pid) or 0}"


def tag() -> str:
    """`<pid>-<start>` of this process (after a fork, of the child)."""
    return _own_tag(os.getpid())


def owner(name: str) -> tuple[int, int] | None:
    """(pid, start) of the process that made `name`, or None for a name not made this way."""
    match = _NAME.match(name)
    return (int(match["pid"]), int(match["start"])) if match else None


def gone(name: str) -> bool:
    """Whether `name` is ours and the process that made it no longer runs. Where /proc cannot tell, the
    maker counts as running: nothing of a live process is ever taken."""
    made_by = owner(name)
    if made_by is None:
        return False
    pid, start = made_by
    if not os.path.isdir("/proc/self"):
        return False
    now = start_ticks(pid)
    return now is None or now != start
