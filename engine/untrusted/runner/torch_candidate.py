"""A PyTorch problem's candidate inside its runner: load `ModelNew`, build it per configuration, call it
on inputs made from the seeds the judge sends, time it, profile one call.

Everything here runs in the candidate's own process, so everything it returns is a claim the judge
checks: outputs against the judge's reference, times against the judge's clock.
"""

from __future__ import annotations

import os
import time
import types
from pathlib import Path

import torch

from engine.untrusted.runner import audit, prebuilt
from engine.untrusted.runner.failures import from_exception, plain
from engine.untrusted.runner.guards import ProcessGuard
from engine.untrusted.runner.scrub import scrub_free_blocks
from engine.wire.candidate import CandidateSpec
from engine.wire.fresh import FreshCalls, outputs_at, reveal_of, timed_block
from engine.wire.inputs import as_list, make_inputs, reuse_buffers, seed_generators
from engine.wire.profiling import profile_call
from engine.wire.reference_module import load_module

_perf_counter = time.perf_counter
EXTENSIONS_ROOT = "/refinery/ext"  # where load_inline builds live, the same path in the build's sandbox


class TorchCandidate:
    kind = "pytorch"  # its call reports which inputs it changed (the C judge reads C arrays back instead)

    def __init__(self, spec: CandidateSpec, scratch: Path, guard: ProcessGuard, extensions_root: str) -> None:
        self.spec, self.scratch, self.guard = spec, scratch, guard
        self.device = spec.device
        self.cuda = spec.device == "cuda"
        self.extensions_root = extensions_root
        self.module: types.ModuleType | None = None
        self.references: dict[str, types.ModuleType] = {}
        self.models: dict[str, object] = {}
        self.previous: dict[str, list] = {}
        self.timed: FreshCalls | None = None
        self.timed_key: tuple | None = None
        self.load_seconds = 0.0

    # --- loading ----------------------------------------------------------------------------------

    def load(self) -> dict:
        spec = self.spec
        path = self.scratch / "candidate.py"
        path.write_text(spec.source)
        if spec.flavor == "load_inline":
            os.environ["TORCH_EXTENSIONS_DIR"] = self.extensions_root
            os.environ["TORCH_CUDA_ARCH_LIST"] = spec.arch_list
            prebuilt.install()  # a library the prebuild built the fast way loads without ninja
        started = _perf_counter()
        try:
            code = compile(spec.source, str(path), "exec")
        except SyntaxError as exc:
            raise from_exception(exc, "import") from exc
        module = types.ModuleType("candidate")
        module.__file__ = str(path)
        with audit.watching(allow_processes=spec.flavor == "load_inline"):
            try:
                exec(code, module.__dict__)  # noqa: S102 - candidate code, in its own sandboxed process
            except (Exception, SystemExit) as exc:
                raise from_exception(exc, "import") from exc
        self.load_seconds = _perf_counter() - started
        if not isinstance(getattr(module, "ModelNew", None), type):
            raise plain("import", "the module defines no class ModelNew", missing_model=True)
        self.module = module
        return {"load_seconds": self.load_seconds}

    def reference(self, config: str) -> types.ModuleType:
        """The problem's module at this configuration's sizes (for get_inputs and get_init_inputs)."""
        if config not in self.references:
            call = self.spec.config(config)
            try:
                self.references[config] = load_module(self.spec.reference_source, call.params,
                                                      filename=self.spec.reference_path)
            except Exception as exc:  # noqa: BLE001 - the problem's file, reported as such
                raise from_exception(exc, f"the problem's file at configuration {config!r}") from exc
        return self.references[config]

    def construct(self, config: str, init_seed: int) -> dict:
        reference = self.reference(config)
        init = list(reference.get_init_inputs())
        torch.manual_seed(init_seed)
        started = _perf_counter()
        with audit.watching():
            try:
                model = self.module.ModelNew(*init)
                if isinstance(model, torch.nn.Module):
                    model = model.to(self.device)
            except (Exception, SystemExit) as exc:
                raise from_exception(exc, f"ModelNew(*get_init_inputs()) on configuration {config!r}") from exc
        self.models[config] = model
        return {"seconds": _perf_counter() - started}

    # --- calls ------------------------------------------------------------------------------------

    def inputs(self, config: str, seed: int, reuse: bool) -> list:
        fresh = make_inputs(self.reference(config), seed, self.device)
        return reuse_buffers(self.previous.get(config) if reuse else None, fresh)

    def call(self, config: str, seed: int, reuse: bool, check_inputs: bool = True) -> tuple[list, list, float]:
        """(outputs, the positions of the inputs the call changed (none looked at unless `check_inputs`),
        seconds including the first call's JIT work)."""
        model = self.models[config]
        inputs = self.inputs(config, seed, reuse)
        before = [t.clone() if check_inputs and isinstance(t, torch.Tensor) else None for t in inputs]
        if self.cuda:
            scrub_free_blocks()
        started = _perf_counter()
        try:
            with audit.watching(), torch.no_grad():
                if self.spec.reseed_calls:
                    seed_generators(seed)
                out = model(*inputs)
            if self.cuda:
                torch.cuda.synchronize()
        except (Exception, SystemExit) as exc:
            raise from_exception(exc, f"forward on configuration {config!r}") from exc
        seconds = _perf_counter() - started
        self.previous[config] = inputs
        changed = [i for i, (was, now) in enumerate(zip(before, inputs, strict=True))
                   if was is not None and not _same_bits(was, now)]
        return as_list(out), changed, seconds

    def runnable(self, config: str, seed: int):
        """A call of the candidate on the inputs of `seed`, made once (for the profiler's loop)."""
        model = self.models[config]
        inputs = make_inputs(self.reference(config), seed, self.device)
        return lambda: model(*inputs)

    def profile(self, config: str, seed: int) -> dict:
        model = self.models[config]
        inputs = make_inputs(self.reference(config), seed, self.device)
        try:
            with torch.no_grad(), audit.watching():
                report = profile_call(lambda: model(*inputs), self.cuda)
        except (Exception, SystemExit) as exc:
            raise from_exception(exc, f"profiled forward on {config!r}") from exc
        return report.to_json()

    def timed_calls(self, config: str, base_seed: int) -> FreshCalls:
        """The timed calls of one configuration's timing: every call on the values of its own seed, written
        into the same tensors (a cache keyed on them returns stale data), its outputs kept for the judge."""
        if self.timed is None or self.timed_key != (config, base_seed):
            self.timed = None  # one timed configuration at a time: free the previous one's tensors first
            model, reference = self.models[config], self.reference(config)
            self.timed = FreshCalls(lambda seed: make_inputs(reference, seed, self.device),
                                    lambda inputs: as_list(model(*inputs)), base_seed, reuse_buffers,
                                    reseed=self.spec.reseed_calls)
            self.timed_key = (config, base_seed)
        return self.timed

    def time_block(self, config: str, base_seed: int, trials: int, warmup: int,
                   flush_bytes: int) -> tuple[list[float], list[int]]:
        """Exactly `trials` event-timed calls, each on fresh values; (their times, a digest of each one's
        outputs). The outputs stay until the next block, for the judge to ask for any of them."""
        try:
            with torch.no_grad():
                return timed_block(self.timed_calls(config, base_seed), trials, warmup, self.device, flush_bytes)
        except (Exception, SystemExit) as exc:
            raise from_exception(exc, f"timing on {config!r}") from exc

    def kept_outputs(self, positions: list[int]) -> list[list]:
        return outputs_at(self.timed.kept if self.timed is not None else [], positions)

    def reveal(self, positions: list[int], picks: list[list[list[int]]]) -> tuple[list[list[dict]], list]:
        """The chosen chunks of the last block's chosen calls, with what was committed of them (`chunks.revealed`)."""
        return reveal_of(self.timed, positions, picks)

    def loop(self, config: str, seeds: list[int], seconds: float) -> int:
        """Back-to-back calls for `seconds` on one input set (the judge reads the energy counter around them)."""
        model = self.models[config]
        inputs = self.timed.inputs if self.timed is not None and self.timed_key[0] == config else \
            make_inputs(self.reference(config), seeds[0], self.device)
        calls, started = 0, _perf_counter()
        try:
            with torch.no_grad():
                while _perf_counter() - started < seconds:
                    for _ in range(8):
                        model(*inputs)
                    calls += 8
                    if self.cuda:
                        torch.cuda.synchronize()
        except (Exception, SystemExit) as exc:
            raise from_exception(exc, "the energy loop") from exc
        return calls


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bitwise equality (NaN equal to NaN, -0.0 not equal to 0.0): did the call write into this input?"""
    if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    return bool(torch.equal(a.reshape(-1).view(torch.uint8), b.detach().reshape(-1).view(torch.uint8)))
