"""`python -m engine.verify.run_once JOB.json [LIMITS_JSON]`: one candidate, one configuration, N calls, no checks.

The profiler wraps this process (`ncu ... python -m engine.verify.run_once job.json`), so it does only
what the kernels need: load the candidate, build inputs from the job's seed, call once to warm up
(JIT compiles, lazy loads), then `repeats` calls inside an NVTX range named `run_once`
(`ncu --nvtx --nvtx-include "run_once/"` profiles just those). It prints one JSON line:
{"ok", "config", "repeats", "seconds_per_call", "error"}. Write the job with
`engine.verify.prepare.write_run_once_job`. LIMITS_JSON (a `SandboxLimits` as JSON) puts the
process under the workers' resource limits before any candidate code loads; the caller gives it a
scratch folder, an environment without secrets and the hard timeout (engine.analysis.dynamic).
"""

from __future__ import annotations

import json
import sys
import time
import types
from pathlib import Path

NVTX_RANGE = "run_once"


def _nvtx(torch, push: bool) -> None:
    if torch.cuda.is_available():
        if push:
            torch.cuda.nvtx.range_push(NVTX_RANGE)
        else:
            torch.cuda.nvtx.range_pop()


def _pytorch_call(job, torch):
    from engine.verify.harness_pytorch import make_inputs
    from engine.verify.problem_code import load_reference_module

    spec = job.configs[0]
    if job.extensions_dir:
        import os

        os.environ["TORCH_EXTENSIONS_DIR"] = job.extensions_dir
        os.environ["TORCH_CUDA_ARCH_LIST"] = job.arch_list
    path = Path(job.scratch_dir) / "candidate.py"
    path.write_text(job.candidate_source)
    module = types.ModuleType("candidate")
    module.__file__ = str(path)
    exec(compile(job.candidate_source, str(path), "exec"), module.__dict__)  # noqa: S102 - profiling run
    ref_mod = load_reference_module(job.reference_source, spec.params, job.reference_path)
    init = list(ref_mod.get_init_inputs())
    torch.manual_seed(job.init_seed)
    model = module.ModelNew(*init)
    if isinstance(model, torch.nn.Module):
        model = model.to(job.device)
    inputs = make_inputs(ref_mod, spec.seeds[0], job.device)
    return lambda: model(*inputs)


def _c_call(job, torch):
    from engine.verify.harness_c import CHarness

    harness = CHarness(job)
    harness.load()
    spec = job.configs[0]
    buffers = harness.to_buffers(spec, harness.host_values(spec, spec.seeds[0]), None)
    args = harness._args(spec, buffers)
    return lambda: harness.fn(*args)


def run(job) -> dict:
    import torch

    Path(job.scratch_dir).mkdir(parents=True, exist_ok=True)
    call = _pytorch_call(job, torch) if job.kind == "pytorch" else _c_call(job, torch)
    cuda = job.device == "cuda" and torch.cuda.is_available()
    with torch.no_grad():
        call()
        if cuda:
            torch.cuda.synchronize()
        _nvtx(torch, True)
        started = time.perf_counter()
        for _ in range(max(1, job.repeats)):
            call()
        if cuda:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        _nvtx(torch, False)
    return {"ok": True, "config": job.configs[0].name, "repeats": job.repeats,
            "seconds_per_call": seconds / max(1, job.repeats), "error": None}


def main(argv: list[str]) -> int:
    from engine.verify.jobs import Job
    from engine.verify.sandbox import SandboxLimits, apply_limits

    if len(argv) not in (1, 2):
        print("usage: python -m engine.verify.run_once JOB.json [LIMITS_JSON]", file=sys.stderr)
        return 2
    job = Job.load(argv[0])
    if len(argv) == 2:
        apply_limits(SandboxLimits.from_json(json.loads(argv[1])), gpu=job.device == "cuda")
    try:
        summary = run(job)
    except Exception as exc:  # noqa: BLE001 - reported as one JSON line for the profiler's caller
        summary = {"ok": False, "config": job.configs[0].name if job.configs else None, "repeats": job.repeats,
                   "seconds_per_call": None, "error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(summary))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
