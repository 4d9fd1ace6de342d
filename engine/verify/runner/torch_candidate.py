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

from engine.verify.runner import audit, prebuilt
from engine.verify.runner.failures import from_exception, plain
from engine.verify.runner.guards import ProcessGuard
from engine.verify.runner.scrub import scrub_free_blocks
from engine.verify.wire import timing
from engine.verify.wire.candidate import CandidateSpec
from engine.verify.wire.inputs import as_list, make_inputs, reuse_buffers
from engine.verify.wire.profiling import profile_call
from engine.verify.wire.reference_module import load_module

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
        self.timing_sets: dict[tuple, list] = {}
        self.timed_calls = 0  # across blocks, so every input set keeps its turn
        self.last_timed: list = []  # the last timed call's outputs on each input set
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
                    torch.manual_seed(seed)
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

    def timing_inputs(self, config: str, seeds: list[int]) -> list:
        key = (config, tuple(seeds))
        if key not in self.timing_sets:
            self.timing_sets = {}  # one timed configuration at a time: free the previous sets
            self.timing_sets[key] = [make_inputs(self.reference(config), s, self.device) for s in seeds]
            self.timed_calls, self.last_timed = 0, [[] for _ in seeds]
        return self.timing_sets[key]

    def time_block(self, config: str, seeds: list[int], trials: int, warmup: int, flush_bytes: int,
                   snapshot: bool = False) -> tuple[list[float], list]:
        """Exactly `trials` event-timed calls rotating over the input sets; the last output on each set.

        With `snapshot`, the last call on each set keeps a copy of its output (inside that trial, 1 of
        many): a candidate may hand back a buffer it rewrites on its next call (a CUDA graph's static
        output), and the check is of what each timed call returned."""
        model = self.models[config]
        sets = self.timing_inputs(config, seeds)
        count = len(sets)
        last = self.last_timed
        offset = self.timed_calls

        reseed = self.spec.reseed_calls

        def seed(_name: str, i: int) -> None:  # untimed, ahead of the flush: seeding is host work
            if reseed:
                torch.manual_seed(seeds[(offset + i) % count])

        def candidate(i: int):
            k = (offset + i) % count
            out = model(*sets[k])
            if snapshot and i >= trials - count:
                last[k] = [o.clone() if isinstance(o, torch.Tensor) else o for o in as_list(out)]
            else:
                last[k] = out
            return out

        policy = timing.TrialPolicy(min_trials=trials, min_seconds=0.0, max_trials=trials, max_seconds=1e9,
                                    floor_trials=trials)
        try:
            with torch.no_grad():
                samples = timing.measure({"candidate": candidate}, policy, self.device, flush_bytes, before=seed,
                                         warmup=warmup, cross_check=False)
        except (Exception, SystemExit) as exc:
            raise from_exception(exc, f"timing on {config!r}") from exc
        self.timed_calls += trials + warmup
        return samples["candidate"].times_us, [as_list(o) if isinstance(o, list | tuple) else [o] if o is not None
                                               else [] for o in last]

    def loop(self, config: str, seeds: list[int], seconds: float) -> int:
        """Back-to-back calls for `seconds` on the timed inputs (the judge reads the energy counter around them)."""
        model = self.models[config]
        inputs = self.timing_inputs(config, seeds)[0]
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
