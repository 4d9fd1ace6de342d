"""A long-lived worker process: one CUDA context, jobs in over a pipe, results out, candidate code only here.

Started by `engine.verify.pool` as `python -m engine.verify.worker CONFIG_JSON`. The protocol pipes
are duplicated to private descriptors at start-up and fds 0/1 are pointed at /dev/null and the
log, so a candidate's prints land in the log and cannot forge a result line. Limits are applied
before the first job; a job that leaves the process untrustworthy (CUDA fault, monkeypatch) ends
the worker after its result is sent, and the pool starts a new one.

Imports: torch, numpy, the standard library and engine.verify modules that import only those
(cupy lazily, inside the candidate or the scrubber).
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import json
import os
import sys
import time
import traceback
from pathlib import Path


def _private_pipes():
    proto_in = os.fdopen(os.dup(0), "r", encoding="utf-8")
    proto_out = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)  # candidate stdout → the log
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return proto_in, proto_out


def _send(stream, message: dict) -> None:
    stream.write(json.dumps(message) + "\n")
    stream.flush()


def _info(job, applied: dict) -> dict:
    import resource

    limits = {name: resource.getrlimit(getattr(resource, name)) for name in
              ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_CORE")}
    return {"env": sorted(os.environ), "cwd": os.getcwd(), "limits": {k: list(v) for k, v in limits.items()},
            "applied": applied, "pid": os.getpid()}


def run_job(job, guard, cuda: bool) -> tuple[dict, bool]:
    """(result JSON, fatal). Never raises: a harness bug is reported as a runtime error and ends the worker."""
    from engine.verify.harness_c import CHarness
    from engine.verify.harness_pytorch import PytorchHarness
    from engine.verify.records import EvaluationResult, Verdict

    if job.device == "cuda" and not cuda:
        return EvaluationResult(Verdict.NEEDS_GPU, "this worker has no GPU").to_json(), False
    try:
        harness = PytorchHarness(job, guard) if job.kind == "pytorch" else CHarness(job, guard)
        result, fatal = harness.run()
    except Exception as exc:  # noqa: BLE001 - a harness bug must not take the pool down
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:]
        result, fatal = EvaluationResult(Verdict.RUNTIME_ERROR, f"harness error: {type(exc).__name__}: {exc}",
                                         log=text), True
    if cuda:
        import torch

        try:
            torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - a sticky fault the job did not see
            fatal = True
            if not result.verdict.is_failure:
                result = EvaluationResult(Verdict.RUNTIME_ERROR, f"CUDA fault after the job: {exc}",
                                          configs=result.configs, device=result.device, seeds=result.seeds)
    return result.to_json(), fatal


def main(config: dict) -> int:
    proto_in, proto_out = _private_pipes()
    faulthandler.enable(file=sys.stderr, all_threads=True)
    started = time.perf_counter()
    import torch
    import torch.autograd.profiler  # noqa: F401 - loaded before the guard's snapshot, not inside a job

    from engine.verify import audit
    from engine.verify.guards import ProcessGuard
    from engine.verify.jobs import Job
    from engine.verify.sandbox import (
        SandboxLimits,
        apply_limits,
        cpu_seconds_used,
        fresh_scratch,
        python_library_dirs,
        set_job_cpu_budget,
    )

    cuda = torch.cuda.is_available()
    device = None
    if cuda:
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # create the context now, not inside the first job's timing
        device = torch.cuda.get_device_name()
        # Candidates import CuPy; loading it here keeps that second out of the first candidate's load time.
        # Missing CuPy is not the worker's failure: CuPy candidates then fail at import with the reason.
        with contextlib.suppress(Exception):
            import cupy  # noqa: F401
    applied = apply_limits(SandboxLimits.from_json(config["limits"]), gpu=cuda)
    cache_dir, base = Path(config["cache_dir"]), Path.cwd()
    read_roots = python_library_dirs() + [Path(p) for p in config.get("read_roots", [])]
    audit.install(read_roots, [cache_dir, base], [Path(p) for p in config.get("denied_roots", [])])
    guard = ProcessGuard()
    _send(proto_out, {"type": "hello", "pid": os.getpid(), "cuda": cuda, "device": device,
                      "torch": torch.__version__, "startup_s": time.perf_counter() - started, "applied": applied})
    for line in proto_in:
        message = json.loads(line)
        if message.get("type") == "stop":
            break
        job = Job.from_json(message["job"])
        print(f"--- job {job.job_id} ({job.kind}, {job.mode}) ---", file=sys.stderr, flush=True)
        scratch = fresh_scratch(Path(job.scratch_dir or base / job.job_id))
        job.scratch_dir = str(scratch)
        os.chdir(scratch)
        audit.set_write_roots([cache_dir, scratch])
        set_job_cpu_budget(job.cpu_seconds)
        job_started = time.perf_counter()
        if job.mode == "info":
            result, fatal = _info(job, applied), False
        else:
            result, fatal = run_job(job, guard, cuda)
            result["worker_seconds"] = time.perf_counter() - job_started
        os.chdir(base)
        gc.collect()
        if cuda and not fatal:
            try:
                torch.cuda.empty_cache()
            except Exception:  # noqa: BLE001 - a dead context: this worker ends below
                fatal = True
        _send(proto_out, {"type": "result", "job_id": job.job_id, "result": result, "fatal": fatal,
                          "cpu_s": cpu_seconds_used()})
        if fatal:
            return 3
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(json.loads(sys.argv[1])))
