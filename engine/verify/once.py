"""One candidate run once inside a runner's sandbox, optionally under a profiler (ncu wraps it there).

The folder from `prepare.write_run_once_folder` becomes the sandbox's scratch; its `ext/` (a
load_inline build) is shown at the path it was built at, so nothing is rebuilt. The profiler runs
inside the same walls as the candidate: it is the candidate's process it starts.
"""

from __future__ import annotations

import sys
from pathlib import Path

from engine.sandbox import JobLimits, Mount, SandboxRun, SandboxSpec, boundary, run, scratch_inside
from engine.sandbox.programs import UNTRUSTED_PACKAGES, hidden_roots, mounts_for, python_env

EXTENSIONS_INSIDE = "/refinery/ext"


def run_once_spec(folder: Path, *, prefix: list[str] = (), limits: JobLimits | None = None, gpu: bool = True,
                  read_only: list[Path] = (), hidden: list[Path] = (), env: dict[str, str] | None = None
                  ) -> SandboxSpec:
    """The sandbox for `[*prefix, python -m engine.untrusted.runner.run_once FOLDER]`."""
    where = boundary()
    ext = Path(folder) / "ext"
    ext.mkdir(exist_ok=True)
    spec = SandboxSpec(argv=[], scratch=Path(folder), limits=limits or JobLimits(), gpu=gpu,
                       read_only=list(read_only), hidden=hidden_roots(*hidden), role="profile")
    inside = scratch_inside(spec, where)
    extensions = EXTENSIONS_INSIDE if where.namespaced else str(ext)
    spec.argv = [*prefix, sys.executable, "-m", "engine.untrusted.runner.run_once", inside]
    spec.mounts = [*mounts_for(UNTRUSTED_PACKAGES, where)] + ([Mount(ext, EXTENSIONS_INSIDE, writable=True)]
                                                           if where.namespaced else [])
    spec.env = python_env(UNTRUSTED_PACKAGES, where, TORCH_EXTENSIONS_DIR=extensions,
                          CUPY_CACHE_DIR=f"{inside}/cupy", TRITON_CACHE_DIR=f"{inside}/triton", **(env or {}))
    return spec


def run_once(folder: Path, *, timeout_s: float, **options) -> SandboxRun:
    return run(run_once_spec(folder, **options), timeout_s=timeout_s)
