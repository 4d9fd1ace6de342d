"""A KernelBench problem's inputs from a seed: the same values on both sides of the boundary.

The judge and the runner each call `make_inputs(module, seed, device)` with the seed the judge chose
for that call; torch's generators give the same values on the same device and torch build, so the
inputs' values never cross the boundary and the candidate learns a seed only when it is asked to
compute with it.
"""

from __future__ import annotations

import copy

import torch


def seed_generators(seed: int) -> None:
    """What `torch.manual_seed` does to the CPU and CUDA generators, in a microsecond instead of 70: the timed
    loop seeds before every call on both sides. Where CUDA is not started yet, torch's own call (which also
    seeds the CUDA generators once CUDA starts)."""
    if torch.cuda.is_available() and not torch.cuda.is_initialized():
        torch.manual_seed(seed)
        return
    torch.default_generator.manual_seed(seed)
    if torch.cuda.is_available():
        for generator in torch.cuda.default_generators:
            generator.manual_seed(seed)


def make_inputs(module, seed: int, device: str) -> list:
    """get_inputs() seeded with `seed`, created directly on the device (fast for large configs)."""
    seed_generators(seed)
    try:
        with torch.device(device):
            values = list(module.get_inputs())
    except (RuntimeError, TypeError):
        seed_generators(seed)
        values = list(module.get_inputs())
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def reuse_buffers(previous: list | None, fresh: list) -> list:
    """Write `fresh` into the previous call's tensors where shapes match: same pointers, new values
    (a result cached by pointer or shape then comes back stale and fails)."""
    if previous is None or len(previous) != len(fresh):
        return fresh
    merged = []
    for p, f in zip(previous, fresh, strict=True):
        if isinstance(p, torch.Tensor) and isinstance(f, torch.Tensor) and p.shape == f.shape and p.dtype == f.dtype:
            p.copy_(f)
            merged.append(p)
        else:
            merged.append(f)
    return merged


def clone_all(values: list) -> list:
    return [v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for v in values]


def as_list(outputs) -> list:
    if isinstance(outputs, list | tuple):
        return list(outputs)
    return [outputs]


def tensor_inputs(values: list) -> list[torch.Tensor]:
    return [v for v in values if isinstance(v, torch.Tensor)]
