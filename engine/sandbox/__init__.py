"""The OS boundary around untrusted code: candidates, their compiles, and imported problems' probes.

Offers `boundary()` (what this machine provides, with the missing pieces in words), `SandboxSpec`
(what one job may see and use, the cores it runs on included), `spawn` (a long-lived sandboxed process)
and `run` (one command to completion under a hard timeout, its output read into bounded memory), and
`JobLimits`; `scratch` makes a job's scratch folder (a quota while it runs, removed after), `output` reads
what a job prints into bounded memory, `sweep_leftovers` removes what killed processes of ours left
behind; `affinity` reads and sets the cores of a job or of this process and holds claims on cores across
processes. Nothing here knows about kernels or problems.
"""

from engine.sandbox.capabilities import Boundary, boundary
from engine.sandbox.launch import (
    Mount,
    SandboxProcess,
    SandboxRun,
    SandboxSpec,
    run,
    scratch_inside,
    spawn,
    sweep_leftovers,
)
from engine.sandbox.limits import JobLimits

__all__ = ["Boundary", "JobLimits", "Mount", "SandboxProcess", "SandboxRun", "SandboxSpec", "boundary", "run",
           "scratch_inside", "spawn", "sweep_leftovers"]
