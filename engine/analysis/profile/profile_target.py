"""Runs one shipped implementation on one configuration, a few calls, for a profiler to watch.

`python -m engine.analysis.profile.profile_target SLUG IMPL [--config NAME] [--calls N]` is the command the
ncu benchmark wraps; it does no checking and no timing (the verifier does those), only the
minimum to launch the candidate's kernels on realistic inputs: the C harness's buffers and
argument values, or the KernelBench inputs and `ModelNew`. Needs a GPU, torch and (for
Python candidates) cupy.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
import types
from pathlib import Path

_CTYPES = {"int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double}


def _init_tensor(rule: str | None, count: int, base: str, torch):
    dtype = {"float": torch.float32, "double": torch.float64, "int": torch.int32, "long": torch.int64}[base]
    match = re.match(r"\s*(uniform|normal|randint)\(([^,]+),([^)]+)\)", rule or "uniform(-1, 1)")
    kind, a, b = match.group(1), float(match.group(2)), float(match.group(3))
    if kind == "randint":
        return torch.randint(int(a), int(b), (count,), dtype=dtype, device="cuda")
    values = torch.empty(count, dtype=torch.float64, device="cuda")
    values = values.uniform_(a, b) if kind == "uniform" else values.normal_(a, b)
    return values.to(dtype)


def run_c(problem, impl, config, calls: int) -> None:
    import numpy as np
    import torch

    from engine.compilation.cuda import compile_shared_library
    from engine.problems.expressions import evaluate
    from engine.settings import get_settings

    settings = get_settings()
    build = compile_shared_library(impl.source, settings.gpu_arch, settings.cache_dir)
    if not build.ok:
        raise SystemExit(f"build failed: {build.log[-500:]}")
    library = ctypes.CDLL(str(build.output))
    entry = getattr(library, problem.entry)
    provided = {}
    if problem.inputs_path is not None:
        module = types.ModuleType("inputs")
        exec(compile(problem.inputs_path.read_text(), str(problem.inputs_path), "exec"), module.__dict__)  # noqa: S102
        provided = module.make_inputs(dict(config.params), np.random.default_rng(0))
    keep, args = [], []
    for arg in problem.args:
        base = arg.base_type
        if arg.is_array:
            count = int(evaluate(arg.size, config.params))
            if arg.name in provided:
                tensor = torch.as_tensor(np.ascontiguousarray(provided[arg.name])).cuda()
            else:
                tensor = _init_tensor(arg.init, count, base, torch)
            keep.append(tensor)
            args.append(ctypes.c_void_p(tensor.data_ptr()))
        else:
            args.append(_CTYPES[base](evaluate(arg.value, config.params)))
    torch.cuda.synchronize()
    for _ in range(calls):
        entry(*args)
    torch.cuda.synchronize()


def run_pytorch(problem, impl, config, calls: int) -> None:
    import torch

    from engine.wire.reference_module import load_module

    reference = load_module(problem.reference_source, dict(config.params), str(problem.reference_path))
    candidate = types.ModuleType("candidate")
    candidate.__file__ = str(impl.path)
    exec(compile(impl.source, str(impl.path), "exec"), candidate.__dict__)  # noqa: S102
    torch.manual_seed(0)
    init = reference.get_init_inputs()
    inputs = [t.cuda() if hasattr(t, "cuda") else t for t in reference.get_inputs()]
    torch.manual_seed(0)
    model = candidate.ModelNew(*init).cuda()
    with torch.no_grad():
        for _ in range(calls):
            model(*inputs)
    torch.cuda.synchronize()


def main(argv: list[str] | None = None) -> None:
    from engine.problems import get_problem

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slug")
    parser.add_argument("impl")
    parser.add_argument("--config", default=None, help="configuration name (default: the largest)")
    parser.add_argument("--calls", type=int, default=1)
    options = parser.parse_args(argv)
    problem = get_problem(options.slug)
    impl = problem.implementation(options.impl)
    config = problem.config(options.config) if options.config else problem.largest_config
    (run_c if problem.kind == "c" else run_pytorch)(problem, impl, config, options.calls)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    main()
