"""Runs a problem's own code in a child process to prove it works: `get_inputs` at the smallest
configuration (and optionally the reference forward), or compiling a C reference.

The parent applies a timeout and turns any failure into a ProblemError that names the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.problems.library import ProblemError
from engine.problems.model import Config, Problem

C_COMPILER = "cc"


def compile_c_shared(source: Path, out: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`cc -O3 -shared -fPIC`, the way the harness builds C references and CPU candidates."""
    return subprocess.run([C_COMPILER, "-O3", "-shared", "-fPIC", *extra, "-o", str(out), str(source), "-lm"],
                          capture_output=True, text=True, timeout=120)


def _probe_pytorch(path: str, params: dict, run_forward: bool) -> dict:
    import torch

    from engine.problems.reference_module import load_module

    module = load_module(Path(path).read_text(), params, filename=path)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            return {"ok": False, "error": f"missing {name}"}
    stage = "get_init_inputs()"
    try:
        init = module.get_init_inputs()
        stage = "get_inputs()"
        inputs = module.get_inputs()
        stage = "Model(*get_init_inputs())"
        torch.manual_seed(0)
        model = module.Model(*init)
        result = {"ok": True, "inputs": [list(getattr(t, "shape", ())) for t in inputs]}
        if run_forward:
            stage = "Model.forward(*get_inputs())"
            started = time.perf_counter()
            with torch.no_grad():
                out = model(*inputs)
            result["forward_s"] = time.perf_counter() - started
            outs = out if isinstance(out, list | tuple) else [out]
            result["outputs"] = [list(getattr(t, "shape", ())) for t in outs]
        return result
    except Exception as exc:  # noqa: BLE001 - the problem's own failure is the message
        return {"ok": False, "error": f"{stage} raised {type(exc).__name__}: {exc}"}


def probe_pytorch(path: Path, config: Config, run_forward: bool = False, timeout_s: float = 120) -> dict:
    """Execute the reference in a child process; raises ProblemError on failure or timeout."""
    cmd = [sys.executable, "-m", "engine.problems.probe", str(path), json.dumps(config.params)]
    if run_forward:
        cmd.append("--forward")
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s,
                              cwd=Path(__file__).resolve().parents[2])
    except subprocess.TimeoutExpired as exc:
        raise ProblemError(path, f"timed out after {timeout_s:.0f} s at configuration {config.name!r}") from exc
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise ProblemError(path, f"crashed at configuration {config.name!r}: {' | '.join(tail)}")
    result = json.loads(lines[-1])
    if not result["ok"]:
        raise ProblemError(path, f"{result['error']} (configuration {config.name!r})")
    return result


def probe_c(problem: Problem) -> None:
    """Compile the C reference as the harness does and check it exports the entry point."""
    import ctypes

    with tempfile.TemporaryDirectory() as scratch:
        lib = Path(scratch) / "reference.so"
        done = compile_c_shared(problem.reference_path, lib)
        if done.returncode != 0:
            first = next((ln for ln in done.stderr.splitlines() if "error" in ln), done.stderr.strip()[:300])
            raise ProblemError(problem.reference_path, f"does not compile: {first}")
        try:
            getattr(ctypes.CDLL(str(lib)), problem.entry)
        except AttributeError as exc:
            raise ProblemError(problem.reference_path, f"defines no function {problem.entry!r}") from exc


def validate(problem: Problem, run_forward: bool = False) -> None:
    """Prove the problem's own code works at its smallest configuration; raises ProblemError."""
    if problem.kind == "c":
        probe_c(problem)
    else:
        probe_pytorch(problem.reference_path, problem.configs[0], run_forward=run_forward)


if __name__ == "__main__":
    print(json.dumps(_probe_pytorch(sys.argv[1], json.loads(sys.argv[2]), "--forward" in sys.argv[3:])))
