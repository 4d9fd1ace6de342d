"""`python -m engine.untrusted.runner.run_once FOLDER`: one candidate, one configuration, N calls, no checks.

The profiler wraps this process (`ncu ... python -m engine.untrusted.runner.run_once /scratch`), inside the
same sandbox as a runner, so it does only what the kernels need: load the candidate the way the runner
does, make the inputs of the job's seed, call once to warm up (JIT compiles, lazy loads), then
`repeats` calls inside an NVTX range named `run_once` (`ncu --nvtx --nvtx-include "run_once/"`
profiles just those). FOLDER holds `job.json` (written by `engine.verify.prepare.write_run_once_folder`),
and the candidate's library (`built.so`) or its load_inline build (`ext/`). It prints one JSON
line: {"ok", "config", "repeats", "seconds_per_call", "error"}.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

NVTX_RANGE = "run_once"


def _nvtx(torch, push: bool) -> None:
    if torch.cuda.is_available():
        if push:
            torch.cuda.nvtx.range_push(NVTX_RANGE)
        else:
            torch.cuda.nvtx.range_pop()


def _candidate(folder: Path, plan: dict):
    from engine.untrusted.runner.guards import ProcessGuard
    from engine.wire.candidate import CandidateSpec

    spec = CandidateSpec.from_json(plan["spec"])
    if spec.kind == "pytorch":
        from engine.untrusted.runner.torch_candidate import TorchCandidate

        extensions = os.environ.get("TORCH_EXTENSIONS_DIR") or str(folder / "ext")
        return TorchCandidate(spec, folder, ProcessGuard(), extensions)
    from engine.untrusted.runner.c_candidate import CCandidate

    return CCandidate(spec, folder, (folder / "built.so").read_bytes())  # prepare.RUN_ONCE_LIBRARY


def run(folder: Path) -> dict:
    import torch

    plan = json.loads((folder / "job.json").read_text())
    candidate = _candidate(folder, plan)
    config, seed, repeats = plan["config"], int(plan["seed"]), max(1, int(plan.get("repeats", 1)))
    candidate.load()
    candidate.construct(config, int(plan.get("init_seed", 0)))
    call = candidate.runnable(config, seed)
    cuda = candidate.cuda and torch.cuda.is_available()
    with torch.no_grad():
        call()  # warm-up: JIT compiles, lazy loads
        if cuda:
            torch.cuda.synchronize()
        _nvtx(torch, True)
        started = time.perf_counter()
        for _ in range(repeats):
            call()
        if cuda:
            torch.cuda.synchronize()
        seconds = time.perf_counter() - started
        _nvtx(torch, False)
    return {"ok": True, "config": config, "repeats": repeats, "seconds_per_call": seconds / repeats, "error": None}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m engine.untrusted.runner.run_once FOLDER", file=sys.stderr)
        return 2
    folder = Path(argv[0])
    try:
        summary = run(folder)
    except Exception as exc:  # noqa: BLE001 - reported as one JSON line for the profiler's caller
        message = getattr(exc, "facts", {}).get("message") or str(exc)
        summary = {"ok": False, "config": None, "repeats": None, "seconds_per_call": None,
                   "error": f"{type(exc).__name__}: {message}"}
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
