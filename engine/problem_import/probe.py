"""Runs a problem's own code to prove it works, inside the sandbox: the reference forward at every
configuration (`validate`, through `engine.problem_import.probe_batch`), one configuration for real on the CPU
(`probe_pytorch`), or compiling a C reference and finding its entry point.

An imported problem file is as untrusted as a candidate until proven otherwise: its top-level code,
its compile and its library's constructors run behind the same OS boundary (no data folder, no
network, limits on the whole job). The parent applies a timeout and turns any failure into a
ProblemError that names the file.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from engine.problem_import.probe_batch import PROBE_TIMEOUT_S
from engine.problems.library import ProblemError
from engine.problems.model import Config, Problem

C_COMPILER = "cc"


def compile_c_shared(source: Path, out: Path, extra: tuple[str, ...] = ()):
    """`cc -O3 -shared -fPIC`, unsandboxed: only for the library's own shipped sources (tests, benchmarks)."""
    import subprocess

    return subprocess.run([C_COMPILER, "-O3", "-shared", "-fPIC", *extra, "-o", str(out), str(source), "-lm"],
                          capture_output=True, text=True, timeout=120)


def _probe(files: dict[str, bytes], argv_tail: list[str], timeout_s: float) -> tuple[dict | None, str]:
    """(the probe's JSON result, or None with why) for `python -m engine.untrusted.probe ARGS` in a
    sandbox whose scratch folder holds `files`; `{scratch}` in ARGS is that folder's path inside."""
    from engine.sandbox import JobLimits, SandboxSpec, boundary, run, scratch_inside
    from engine.sandbox import scratch as scratch_folders
    from engine.sandbox.programs import UNTRUSTED_PACKAGES, hidden_roots, mounts_for, python_env

    where = boundary()
    limits = JobLimits(memory_mb=16384, processes=128, cpu_seconds=int(timeout_s) * 2)
    folder = scratch_folders.make("probe", quota_mb=limits.scratch_mb)
    try:
        for name, content in files.items():
            (folder / name).write_bytes(content)
        spec = SandboxSpec(argv=[], scratch=folder, hidden=hidden_roots(), role="probe", limits=limits)
        inside = scratch_inside(spec, where)
        spec.argv = [sys.executable, "-m", "engine.untrusted.probe",
                     *[a.replace("{scratch}", inside) for a in argv_tail]]
        spec.mounts = mounts_for(UNTRUSTED_PACKAGES, where)
        spec.env = python_env(UNTRUSTED_PACKAGES, where, CUDA_VISIBLE_DEVICES="")
        done = run(spec, timeout_s=timeout_s)
    finally:
        scratch_folders.remove(folder)
    if done.timed_out:
        return None, f"timed out after {timeout_s:.0f} s"
    if done.flooded:
        return None, done.detail
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        return json.loads(lines[-1]), ""
    except (IndexError, json.JSONDecodeError):
        tail = " | ".join(done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:])
        return None, f"crashed ({done.detail}): {tail}"


def probe_pytorch(path: Path, config: Config, run_forward: bool = False, timeout_s: float = PROBE_TIMEOUT_S) -> dict:
    """Execute the reference in the sandbox; raises ProblemError on failure or timeout."""
    argv = ["{scratch}/reference.py", json.dumps(config.params), *(["--forward"] if run_forward else [])]
    result, why = _probe({"reference.py": Path(path).read_bytes()}, argv, timeout_s)
    if result is None:
        raise ProblemError(path, f"{why} at configuration {config.name!r}")
    if not result["ok"]:
        raise ProblemError(path, f"{result['error']} (configuration {config.name!r})")
    return result


def probe_c(problem: Problem) -> None:
    """Compile the C reference as the harness does (sandboxed) and find its entry point (in the sandbox:
    loading a library runs its constructors)."""
    from engine.compilation.c import compile_c_library

    with tempfile.TemporaryDirectory() as cache:
        build = compile_c_library(problem.reference_source, Path(cache))
        if not build.ok:
            first = next((ln for ln in build.log.splitlines() if "error" in ln), build.log.strip()[:300])
            raise ProblemError(problem.reference_path, f"does not compile: {first}")
        result, why = _probe({"reference.so": build.output.read_bytes()},
                             ["--c", "{scratch}/reference.so", str(problem.entry)], 60)
    if result is None:
        raise ProblemError(problem.reference_path, f"its library failed when loaded: {why}")
    if not result["ok"]:
        raise ProblemError(problem.reference_path, result["error"])


def validate(problem: Problem, session=None) -> None:
    """Prove the problem's own code works: a PyTorch reference runs forward at every configuration (on
    meta tensors where they suffice, in training mode), a C reference compiles and loads; raises
    ProblemError naming the file, the configuration and the cause."""
    if problem.kind == "c":
        probe_c(problem)
        return
    from engine.problem_import.probe_batch import ProbeRequest, ProbeSession

    owned = session is None
    session = session or ProbeSession()
    try:
        request = ProbeRequest("reference", problem.reference_path, problem.reference_source, problem.configs)
        outcome = session.probe([request])["reference"]
    finally:
        if owned:
            session.close()
    if outcome.error is not None:
        raise ProblemError(problem.reference_path, outcome.error)
    for config in problem.configs:
        result = outcome.config(config.name)
        if result is None or not result.ok:
            raise ProblemError(problem.reference_path,
                               f"configuration {config.name!r}: {result.error if result else 'not run'}")
