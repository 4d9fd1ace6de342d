"""A C problem's candidate inside its runner: its shared library's entry point called through ctypes on
device buffers (CUDA candidates) or host buffers (C candidates), with inputs made from the judge's seeds.

The runner owns allocation and transfers, so only the entry point's own work is timed. Output arrays
are poisoned before every call, so one that is never written comes back as the poison pattern; later
calls of a configuration reuse the same buffers with new values, so a cache keyed on pointers returns
stale data and fails at the judge.
"""

from __future__ import annotations

import ctypes
import time
from pathlib import Path

import torch

from engine.untrusted.runner.failures import CandidateFailure, from_exception, plain
from engine.wire.c_entry import load_entry, placed_copy
from engine.wire.c_inputs import ArgSpec, made_inputs
from engine.wire.c_timing import CTimedCalls
from engine.wire.candidate import CandidateSpec
from engine.wire.fresh import outputs_at, reveal_of, timed_block
from engine.wire.poison import poison_

_perf_counter = time.perf_counter


class CCandidate:
    kind = "c"

    def __init__(self, spec: CandidateSpec, scratch: Path, library: bytes) -> None:
        self.spec, self.scratch, self.library_bytes = spec, scratch, library
        self.device = "cuda" if spec.flavor == "cuda-library" and spec.device == "cuda" else "cpu"
        self.cuda = self.device == "cuda"
        self.inputs_path: str | None = None
        self.buffers: dict[str, dict] = {}
        self.timed: CTimedCalls | None = None
        self.timed_key: tuple | None = None
        self.load_seconds = 0.0

    def args(self, config: str) -> list[ArgSpec]:
        return [ArgSpec(**a) for a in self.spec.config(config).c_args]

    def load(self) -> dict:
        if self.spec.inputs_source:
            path = self.scratch / "inputs.py"
            path.write_text(self.spec.inputs_source)
            self.inputs_path = str(path)
        library = self.scratch / "candidate.so"
        library.write_bytes(self.library_bytes)
        started = _perf_counter()
        try:
            self.lib, self.fn = load_entry(str(library), self.spec.entry, self.args(self.spec.configs[0].name))
        except (OSError, AttributeError) as exc:
            raise plain("load", f"the candidate library does not load or lacks {self.spec.entry}: {exc}",
                        load_error=True) from exc
        self.load_seconds = _perf_counter() - started
        return {"load_seconds": self.load_seconds}

    def construct(self, config: str, init_seed: int) -> dict:
        return {"seconds": 0.0}

    # --- one call ---------------------------------------------------------------------------------

    def host_values(self, config: str, seed: int) -> dict:
        return self.made_values(config, seed)[0]

    def to_buffers(self, config: str, values: dict, previous: dict | None) -> dict:
        buffers = {}
        for position, arg in enumerate(self.args(config)):
            if not arg.is_array:
                continue
            source = torch.from_numpy(values[arg.name])
            old = previous.get(arg.name) if previous else None
            if old is not None and old.shape == source.shape and old.dtype == source.dtype:
                buffers[arg.name] = old
                old.copy_(source)
            else:
                buffers[arg.name] = placed_copy(source, self.device, position)
            if arg.intent == "out":
                poison_(buffers[arg.name])
        return buffers

    def argv(self, config: str, buffers: dict) -> list:
        return [buffers[a.name].data_ptr() if a.is_array else a.value for a in self.args(config)]

    def invoke(self, config: str, buffers: dict, stage: str) -> None:
        try:
            self.fn(*self.argv(config, buffers))
            if self.cuda:
                torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - a CUDA fault surfaces at the synchronisation
            raise from_exception(exc, stage) from exc
        if self.cuda and hasattr(self.lib, "refinery_last_error"):
            code = self.lib.refinery_last_error()
            if code:
                self.lib.refinery_error_string.restype = ctypes.c_char_p
                text = self.lib.refinery_error_string(code).decode()
                raise plain(stage, f"CUDA error: {text} (code {code})", cuda_fault=True)

    def call(self, config: str, seed: int, reuse: bool) -> tuple[list, list, float]:
        values = self.host_values(config, seed)
        buffers = self.to_buffers(config, values, self.buffers.get(config) if reuse else None)
        started = _perf_counter()
        self.invoke(config, buffers, f"the entry point on configuration {config!r}")
        elapsed = _perf_counter() - started
        self.buffers[config] = buffers
        args = self.args(config)
        outputs = [buffers[a.name] for a in args if a.is_array and a.intent in ("out", "inout")]
        inputs = [buffers[a.name] for a in args if a.is_array and a.intent == "in"]
        return outputs, inputs, elapsed

    def runnable(self, config: str, seed: int):
        """A call of the entry point on buffers filled once from `seed` (for the profiler's loop)."""
        buffers = self.to_buffers(config, self.host_values(config, seed), None)
        argv = self.argv(config, buffers)
        return lambda: (self.fn(*argv), buffers)

    def profile(self, config: str, seed: int) -> dict:
        return {}

    # --- timing -----------------------------------------------------------------------------------

    def time_block(self, config: str, base_seed: int, trials: int, warmup: int,
                   flush_bytes: int) -> tuple[list[float], list[int]]:
        """Timed calls rotating through the placements of the timing's arrays (`c_timing.CTimedCalls`, the
        same steps as the judge's baselines), each on fresh values with poisoned outputs; (their times, a
        digest of each one's outputs). The buffers stay for later blocks of the same timing."""
        args = self.args(config)
        try:
            if self.timed is None or self.timed_key != (config, base_seed):
                self.timed = None
                values, drawn = self.made_values(config, base_seed)
                self.timed = CTimedCalls(self.fn, args, values, drawn, self.device, base_seed)
                self.timed_key = (config, base_seed)
            return timed_block(self.timed, trials, warmup, self.device, flush_bytes)
        except CandidateFailure:
            raise
        except Exception as exc:  # noqa: BLE001
            raise from_exception(exc, f"timing on {config!r}") from exc

    def made_values(self, config: str, seed: int) -> tuple[dict, frozenset[str]]:
        call = self.spec.config(config)
        try:
            return made_inputs(self.args(config), call.params, seed, self.inputs_path)
        except Exception as exc:  # noqa: BLE001 - the problem's input rules failed: its fault, said so
            raise from_exception(exc, f"the problem's input generation on {config!r}") from exc

    def kept_outputs(self, positions: list[int]) -> list[list]:
        return outputs_at(self.timed.kept if self.timed is not None else [], positions)

    def reveal(self, positions: list[int], picks: list[list[list[int]]]) -> tuple[list[list[dict]], list]:
        """The chosen chunks of the last block's chosen calls, with what was committed of them (`chunks.revealed`)."""
        return reveal_of(self.timed, positions, picks)

    def loop(self, config: str, seeds: list[int], seconds: float) -> int:
        if self.timed is None or self.timed_key[0] != config:
            self.time_block(config, seeds[0], 1, 0, 0)
        argv = self.timed.argv(0)
        calls, started = 0, _perf_counter()
        try:
            while _perf_counter() - started < seconds:
                for _ in range(8):
                    self.fn(*argv)
                calls += 8
                if self.cuda:
                    torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001
            raise from_exception(exc, "the energy loop") from exc
        return calls
