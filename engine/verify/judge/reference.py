"""The judge's own reference: the problem's model run on the inputs of a seed, and the answers it gives.

Kept across the candidates of a problem (the judge outlives them): models per configuration, and
expected outputs per seed, since the candidates of one batch share their seeds. The float64 model on
upcast inputs is the answer compared against; the native-precision answer sets the rounding allowance.
Models run as KernelBench runs them: built under the same seed as the candidate's, in training mode
(nn.Module's default: BatchNorm on batch statistics, dropout active), called under no_grad. A model
that draws random numbers is seeded with the call's seed before every call, on both sides.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from dataclasses import dataclass

import torch

from engine.wire.inputs import as_list, clone_all, make_inputs, seed_generators
from engine.wire.randomness import draws_random_numbers
from engine.wire.reference_module import load_module

EXPECTED_CACHE_BYTES = 16 * 2**30


class ReferenceFailure(Exception):  # noqa: N818 - the problem's own code failed: said so, not blamed on the candidate
    pass


@dataclass
class Expected:
    native: list
    float64: list | None
    mutates: bool  # the reference itself changes its inputs (then input changes are not held against a candidate)
    inputs: list  # the inputs of the seed, untouched (for the input-mutation check)
    magnitude: list | None = None  # the float64 model on |inputs| with |parameters|: the honest rounding scale

    @property
    def answer(self) -> list:
        return self.float64 if self.float64 is not None else self.native

    @property
    def nbytes(self) -> int:
        tensors = [t for t in (*self.native, *(self.float64 or []), *self.inputs, *(self.magnitude or []))
                   if isinstance(t, torch.Tensor)]
        return sum(t.numel() * t.element_size() for t in tensors)


def _detach(outputs) -> list:
    return [o.detach() if isinstance(o, torch.Tensor) else o for o in as_list(outputs)]


def _upcast(values: list) -> list:
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def _magnitudes(values: list) -> list:
    return [v.double().abs() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def magnitude_model(wide):
    """The float64 model with every floating parameter and buffer replaced by its absolute value: run on
    |inputs|, a product or sum gives Σ|aᵢ||bᵢ| (the scale an honest order's rounding follows); for other ops
    a magnitude of the same size (correctness.ORDER_SCALE)."""
    model = copy.deepcopy(wide)
    with torch.no_grad():
        for tensor in (*model.parameters(), *model.buffers()):
            if tensor.is_floating_point():
                tensor.abs_()
    return model


class TorchReference:
    """Models and answers of one problem's reference on one device."""

    def __init__(self, source: str, path: str, device: str, init_seed: int) -> None:
        self.source, self.path, self.device, self.init_seed = source, path, device, init_seed
        self.reseed = draws_random_numbers(source)  # seed before every call; no float64 twin (other draws)
        self.key = hashlib.sha256(source.encode()).hexdigest()[:16]
        self.modules: dict[str, object] = {}
        self.models: dict[str, tuple] = {}
        self.magnitude_models: dict[str, object] = {}
        self.expected: OrderedDict[tuple, Expected] = OrderedDict()
        self.profiles: dict[str, object] = {}  # configuration → the reference's own call profiled

    def module(self, config: str, params: dict):
        if config not in self.modules:
            try:
                self.modules[config] = load_module(self.source, params, filename=self.path)
            except Exception as exc:  # noqa: BLE001 - the problem's file
                raise ReferenceFailure(f"the problem's file fails at configuration {config!r}: "
                                       f"{type(exc).__name__}: {exc}") from exc
        return self.modules[config]

    def model(self, config: str, params: dict) -> tuple:
        """(native model, float64 model or None), built once per configuration."""
        if config not in self.models:
            module = self.module(config, params)
            try:
                init = list(module.get_init_inputs())
                torch.manual_seed(self.init_seed)
                native = module.Model(*init).to(self.device)  # training mode, as constructed (KernelBench)
            except Exception as exc:  # noqa: BLE001
                raise ReferenceFailure(f"the reference failed on configuration {config!r}: "
                                       f"{type(exc).__name__}: {exc}") from exc
            wide = None
            if not self.reseed:  # a float64 twin would draw other random numbers than the model it checks
                try:
                    wide = copy.deepcopy(native).double()
                except Exception:  # noqa: BLE001 - some modules cannot be upcast; the native answer is used then
                    wide = None
            self.models[config] = (native, wide)
        return self.models[config]

    def inputs(self, config: str, params: dict, seed: int) -> list:
        return make_inputs(self.module(config, params), seed, self.device)

    def magnitude(self, config: str, wide_model, inputs: list, native: list) -> list | None:
        """The honest rounding scale of each output (None where the model cannot run on magnitudes)."""
        try:
            if config not in self.magnitude_models:
                self.magnitude_models[config] = magnitude_model(wide_model)
            with torch.no_grad():
                found = _detach(self.magnitude_models[config](*_magnitudes(clone_all(inputs))))
        except Exception:  # noqa: BLE001 - an op that rejects its magnitudes: no scale, the other terms remain
            return None
        if len(found) != len(native):
            return None
        return [m.abs() if isinstance(m, torch.Tensor) and m.is_floating_point() else None for m in found]

    def answer(self, config: str, params: dict, seed: int, keep: bool = True) -> Expected:
        """The answers on the inputs of `seed`; `keep`: cache them (the seeds candidates share; a timed call's
        own seed is used once)."""
        key = (config, seed)
        if key in self.expected:
            self.expected.move_to_end(key)
            return self.expected[key]
        native_model, wide_model = self.model(config, params)
        inputs = self.inputs(config, params, seed)
        clones = clone_all(inputs)
        try:
            with torch.no_grad():
                if self.reseed:
                    seed_generators(seed)
                native = _detach(native_model(*clones))
        except Exception as exc:  # noqa: BLE001
            raise ReferenceFailure(f"the reference raised {type(exc).__name__}: {exc}") from exc
        mutates = not all(torch.equal(a, b) for a, b in zip(clones, inputs, strict=True)
                          if isinstance(a, torch.Tensor))
        wide = None
        if wide_model is not None and any(isinstance(o, torch.Tensor) and o.is_floating_point() for o in native):
            try:
                with torch.no_grad():
                    wide = _detach(wide_model(*_upcast(clone_all(inputs))))
            except Exception:  # noqa: BLE001 - an op without a float64 kernel: compare with the native answer
                wide = None
            if wide is not None and len(wide) != len(native):
                wide = None
        magnitude = self.magnitude(config, wide_model, inputs, native) if wide is not None else None
        if self.device == "cuda":
            torch.cuda.synchronize()
        expected = Expected(native, wide, mutates, inputs, magnitude)
        if not keep:
            return expected
        self.expected[key] = expected
        while sum(e.nbytes for e in self.expected.values()) > EXPECTED_CACHE_BYTES and len(self.expected) > 1:
            self.expected.popitem(last=False)
        return expected
