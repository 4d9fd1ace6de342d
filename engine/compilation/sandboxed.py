"""Compilers run on candidate source inside the sandbox: the source is hostile too.

An `#include "../../settings.toml"` or a `#include "/home/…/.ssh/id_rsa"` must find nothing, and a
compiler plugin or a pathological template must not reach anything or outlive its time. So each
compile gets a fresh scratch folder (the source, the outputs, the compiler's temporaries), runs in
its own sandbox (no network, no data folder, no repository, limits on the whole job), and only the
named outputs are copied out.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from engine.sandbox import JobLimits, SandboxSpec, boundary, run, scratch_inside
from engine.sandbox import scratch as scratch_folders
from engine.sandbox.programs import hidden_roots, python_env

COMPILE_LIMITS = JobLimits(memory_mb=8192, processes=128, cpu_seconds=900, file_size_mb=1024)
SCRATCH = "{scratch}"  # stands for the scratch folder's path inside, in argv


@dataclass(frozen=True)
class CompileRun:
    ok: bool
    log: str
    seconds: float
    outputs: dict[str, Path]  # copied out, to the caller's paths
    timed_out: bool = False
    flooded: bool = False  # stopped for printing more than the sandbox reads (its log: head and tail)


def compile_sandboxed(argv: list[str], sources: dict[str, str], outputs: dict[str, Path], timeout_s: float,
                      hidden: tuple[Path, ...] = (), env: dict[str, str] | None = None) -> CompileRun:
    """Run `argv` (with `{scratch}` for the scratch folder) on `sources` (file name → text); copy the
    produced files named in `outputs` (file name → destination) out. A compiler failure is a result."""
    scratch = scratch_folders.make("build", quota_mb=COMPILE_LIMITS.scratch_mb)
    started = time.perf_counter()
    try:
        for name, text in sources.items():
            (scratch / name).write_text(text)
        spec = SandboxSpec(argv=[], scratch=scratch, hidden=hidden_roots(*hidden), limits=COMPILE_LIMITS,
                           role="build", env=python_env(None, **(env or {})))
        inside = scratch_inside(spec, boundary())
        spec.argv = [a.replace(SCRATCH, inside) for a in argv]
        done = run(spec, timeout_s=timeout_s)
        log = (done.stdout + done.stderr).decode("utf-8", "replace").strip()
        if done.timed_out:
            log = f"{log}\ncompiler stopped: {done.detail}".strip()
        elif done.flooded:
            log = f"{log}\ncompiler {done.detail}".strip()
        copied: dict[str, Path] = {}
        ok = done.returncode == 0 and not done.timed_out and not done.flooded
        for name, destination in outputs.items():
            produced = scratch / name
            if ok and produced.is_file():
                destination.parent.mkdir(parents=True, exist_ok=True)
                partial = destination.with_name(destination.name + f".{scratch.name}.partial")
                shutil.copyfile(produced, partial)
                partial.replace(destination)
                copied[name] = destination
        ok = ok and len(copied) == len(outputs)
        return CompileRun(ok, log.replace(f"{inside}/", ""), time.perf_counter() - started, copied, done.timed_out,
                          done.flooded)
    finally:
        scratch_folders.remove(scratch)
