"""One KernelBench file probed at its configurations, the way KernelBench itself calls it: the module at the
configuration's sizes, `Model(*get_init_inputs())` left in training mode, `forward(*get_inputs())` under
`no_grad`. What comes back per configuration: the input, output and init-argument signatures, the FLOPs
and minimum bytes of one call, or the one-line reason it failed.

The call runs on meta tensors first: shapes, dtypes and the shape checks of every op (a BatchNorm given
one value per channel in training mode) come out without memory or arithmetic, so a 4 GB input costs
nothing. Only when the meta run stops on something meta tensors cannot do (`.item()`, an op with no meta
kernel, a tensor made on the CPU explicitly) is the configuration run for real on the CPU.

Runs inside the probe's sandbox: imports torch, the standard library and the wire package only.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from collections.abc import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from engine.untrusted.probe.rnn import rnn_on_meta

# Ops that only move, copy or create data: no arithmetic in a roofline's sense.
MOVEMENT_OPS = frozenset({
    "clone", "_to_copy", "copy", "cat", "stack", "index", "index_select", "gather", "scatter", "constant_pad_nd",
    "repeat", "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full",
    "full_like", "fill", "new_empty", "new_zeros", "new_ones", "new_full", "detach", "lift_fresh", "arange",
    "slice_scatter", "select_scatter", "flip", "roll", "tril", "triu", "embedding", "scalar_tensor", "randn",
    "rand", "randint", "randperm", "normal", "uniform", "bernoulli", "_local_scalar_dense", "index_put",
    "masked_scatter", "upsample_nearest2d", "upsample_nearest3d", "upsample_nearest1d", "max_pool2d_with_indices",
    "max_pool3d_with_indices", "pixel_shuffle", "unfold", "im2col", "col2im",
})
META_LIMITS = ("meta", "data-dependent", "data dependent", "item()", "nonzero", "not implemented")


class OpCounter(TorchDispatchMode):
    """Counts the floating-point operations of the aten ops a call runs: torch's own formulas where it
    has them (matmuls, convolutions, attention), one per output element for pointwise ops, one per input
    element for the rest (reductions, norms, softmax), none for views and data movement. An estimate for
    the roofline, not a measurement."""

    def __init__(self) -> None:
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        with contextlib.suppress(Exception):
            self.flops += int(op_flops(func, args, kwargs, out))
        return out


def _tensors(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def op_flops(func, args, kwargs, out) -> int:
    packet = func._overloadpacket
    if packet in flop_registry:
        return flop_registry[packet](*args, **kwargs, out_val=out)
    if packet.__name__.rstrip("_") in MOVEMENT_OPS:
        return 0
    returns = func._schema.returns
    if returns and all(r.alias_info is not None and not r.alias_info.is_write for r in returns):
        return 0  # a view
    outputs = _tensors(out)
    if not outputs:
        return 0
    if torch.Tag.pointwise in func.tags:
        return sum(t.numel() for t in outputs)
    return max((t.numel() for t in _tensors(list(args)) + _tensors(kwargs)), default=0)


def describe(value) -> dict:
    """A value as `show` lists it: a tensor's shape and dtype, anything else by its repr."""
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}
    text = repr(value)
    return {"value": text if len(text) <= 80 else text[:77] + "..."}


def _flat(value) -> list:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flat(v)]
    return [value]


def _nbytes(tensors) -> int:
    seen, total = set(), 0
    for t in tensors:
        key = id(t)
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
    return total


def one_line(exc: BaseException, filename: str) -> str:
    """`Type: first line of the message (line N)`, N the deepest line of the user's file it passed."""
    message = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    if len(message) > 300:
        message = message[:297] + "..."
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f" (line {lines[-1]})" if lines else ""
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"


def missing_module(exc: BaseException) -> str | None:
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return exc.name.split(".")[0]
    return None


class StageFailure(Exception):  # noqa: N818 - carries the stage the problem's code failed in
    def __init__(self, stage: str, cause: BaseException) -> None:
        super().__init__(stage)
        self.stage, self.cause = stage, cause


def _stage(name: str, progress: Callable[[str], None], call: Callable):
    progress(name)
    try:
        return call()
    except Exception as exc:  # noqa: BLE001 - the problem's own failure, reported with its stage
        raise StageFailure(name, exc) from exc


def run_config(source: str, filename: str, params: dict, mode: str,
               progress: Callable[[str], None] = lambda stage: None) -> dict:
    """One configuration; raises StageFailure with the stage that failed. `mode`: "meta" (everything on
    meta tensors), "meta-call" (the model built on the CPU, then moved to meta for the call: for a
    constructor that reads values), or "cpu" (a real call)."""
    from engine.wire.reference_module import load_module

    module = _stage("loading the file", progress, lambda: load_module(source, params, filename=filename))
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise StageFailure("loading the file", AttributeError(f"the file defines no {name}"))
    meta = torch.device("meta") if mode != "cpu" else contextlib.nullcontext()
    build = torch.device("meta") if mode == "meta" else contextlib.nullcontext()
    with build:
        init = list(_stage("get_init_inputs()", progress, module.get_init_inputs))
        torch.manual_seed(0)
        model = _stage("Model(*get_init_inputs())", progress, lambda: module.Model(*init))
    if mode == "meta-call" and isinstance(model, torch.nn.Module):
        model = model.to("meta")
    counter = OpCounter()
    shortcut = rnn_on_meta(counter) if mode != "cpu" else contextlib.nullcontext()
    with meta:
        inputs = list(_stage("get_inputs()", progress, module.get_inputs))

        def forward():
            with torch.no_grad(), counter, shortcut:
                return model(*inputs)

        started = time.perf_counter()
        out = _stage("Model.forward(*get_inputs())", progress, forward)
    outputs = _flat(out)
    weights = [*model.parameters(), *model.buffers()] if isinstance(model, torch.nn.Module) else []
    moved = _tensors(inputs) + _tensors(outputs) + weights
    return {"ran_on": "cpu" if mode == "cpu" else "meta", "seconds": time.perf_counter() - started,
            "init": [describe(v) for v in init], "inputs": [describe(v) for v in inputs],
            "outputs": [describe(v) for v in outputs], "flops": counter.flops, "bytes": _nbytes(moved)}


def _meta_cannot(failure: StageFailure) -> bool:
    """Whether a meta run stopped on a limit of meta tensors rather than on the problem's own fault."""
    if isinstance(failure.cause, NotImplementedError):
        return True
    text = str(failure.cause).lower()
    return any(word in text for word in META_LIMITS)


def probe_config(source: str, filename: str, name: str, params: dict,
                 progress: Callable[[str], None] = lambda stage: None) -> dict:
    """A configuration's signature, from meta tensors where they suffice, else from a real CPU run."""
    def note(stage: str) -> None:
        progress(f"{stage} at configuration {name!r}")

    mode = "meta"
    try:
        while True:
            try:
                result = run_config(source, filename, params, mode, note)
                break
            except StageFailure as failure:
                if mode == "cpu" or failure.stage == "loading the file" or not _meta_cannot(failure):
                    raise
                building = failure.stage in ("get_init_inputs()", "Model(*get_init_inputs())")
                mode = "meta-call" if mode == "meta" and building else "cpu"
    except StageFailure as failure:
        module = missing_module(failure.cause)
        if module is not None:
            return {"name": name, "ok": False, "fatal": True,
                    "error": f"needs the module {module}, which is not installed"}
        fatal = failure.stage == "loading the file" and isinstance(failure.cause, SyntaxError)
        return {"name": name, "ok": False, "fatal": fatal,
                "error": f"{failure.stage} raised {one_line(failure.cause, filename)}"}
    return {"name": name, "ok": True, **result}


def probe_file(source: str, filename: str, configs: list[dict],
               progress: Callable[[str], None] = lambda stage: None) -> list[dict]:
    """Every configuration in order; stops early on a fault no size can cure (a missing module)."""
    results = []
    for config in configs:
        result = probe_config(source, filename, config["name"], config.get("params", {}), progress)
        results.append(result)
        if result.get("fatal"):
            break
    return results
