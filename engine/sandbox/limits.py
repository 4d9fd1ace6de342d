"""The limits one sandboxed job runs under, and the launcher that applies them before anything else runs.

Memory and process count hold for the whole job through a control group where one can be made;
CPU seconds, file size and core dumps are per-process rlimits, inherited by everything the job starts.
The launcher is a few lines of Python run with `-I -S` (no site packages, no environment): it joins
the job's control group, sets the rlimits and, when asked, the cores it may run on, then execs the
sandbox, so no process of the job ever exists outside its limits or off its cores.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass

LAUNCHER = (
    "import json, os, resource, sys\n"
    "plan = json.loads(sys.argv[1])\n"
    "for path in plan['cgroup_procs']:\n"
    "    with open(path, 'w') as handle:\n"
    "        handle.write(str(os.getpid()))\n"
    "for name, (soft, hard) in plan['rlimits'].items():\n"
    "    limit = getattr(resource, name)\n"
    "    old_soft, old_hard = resource.getrlimit(limit)\n"
    "    if old_hard != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or hard > old_hard):\n"
    "        hard = old_hard\n"
    "    if hard != resource.RLIM_INFINITY and (soft == resource.RLIM_INFINITY or soft > hard):\n"
    "        soft = hard\n"
    "    resource.setrlimit(limit, (soft, hard))\n"
    "if plan.get('cpus'):\n"
    "    os.sched_setaffinity(0, plan['cpus'])\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


@dataclass(frozen=True)
class JobLimits:
    """Defaults suit one candidate on one GPU: 16 GB of host memory, 256 processes, 10 CPU minutes, 4 GB of
    scratch (its scratch folder made by `engine.sandbox.scratch` with this quota; /tmp and /dev/shm inside
    have the same size)."""

    memory_mb: int = 16384
    processes: int = 256
    cpu_seconds: int = 600
    file_size_mb: int = 512
    scratch_mb: int = 4096

    def to_json(self) -> dict:
        return {"memory_mb": self.memory_mb, "processes": self.processes, "cpu_seconds": self.cpu_seconds,
                "file_size_mb": self.file_size_mb, "scratch_mb": self.scratch_mb}

    @classmethod
    def from_json(cls, data: dict) -> JobLimits:
        return cls(**{k: int(v) for k, v in data.items() if k in cls.__dataclass_fields__})

    def rlimits(self, whole_job_memory: bool, gpu: bool) -> dict[str, tuple[int, int]]:
        """Per-process rlimits; address space and process count only where no control group holds them
        (CUDA reserves far more address space than it uses, so never with a GPU)."""
        limits = {"RLIMIT_CPU": (self.cpu_seconds, self.cpu_seconds + 5),
                  "RLIMIT_FSIZE": (self.file_size_mb * 2**20,) * 2, "RLIMIT_CORE": (0, 0)}
        if not whole_job_memory:
            if not gpu:
                limits["RLIMIT_AS"] = (self.memory_mb * 2**20,) * 2
            limits["RLIMIT_NPROC"] = (self.processes,) * 2
        return limits


def launcher_argv(cgroup_procs: list[str], rlimits: dict[str, tuple[int, int]], argv: list[str],
                  cpus: tuple[int, ...] | None = None) -> list[str]:
    """The launcher's command line; `cpus`: the cores the job runs on (None: those of the caller)."""
    plan = {"cgroup_procs": cgroup_procs, "rlimits": {k: [int(v[0]), int(v[1])] for k, v in rlimits.items()},
            "cpus": sorted(cpus) if cpus else None}
    return [sys.executable, "-I", "-S", "-c", LAUNCHER, json.dumps(plan), *argv]

