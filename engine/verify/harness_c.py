"""The worker side of a C problem: the compiled C reference against a CUDA candidate (device buffers)
or a CPU candidate (host buffers), through ctypes.

The harness owns allocation, transfers and timing, so only the entry point's own work is timed.
Per configuration and trial: fresh inputs from a recorded seed, the reference on host copies,
the candidate's `out` arrays poisoned (NaN bytes) first, later trials reusing the same buffers
with new values (pointer-keyed caches return stale data), then outputs compared, `in` arrays
compared with their originals, outputs compared with the previous trial's.
"""

from __future__ import annotations

import ctypes
import shutil
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np
import torch

from engine.verify import timing
from engine.verify.correctness import compare, looks_cached
from engine.verify.energy_calls import record_energy
from engine.verify.jobs import CArgSpec, ConfigSpec, Job
from engine.verify.outcome import JobFailure, JobState, failure_result, final_result, is_cuda_fault, short_traceback
from engine.verify.problem_code import c_inputs
from engine.verify.records import ConfigResult, EvaluationResult, Verdict
from engine.verify.scrub import poison_

_perf_counter = time.perf_counter
REFERENCE_CACHE_BYTES = 8 * 2**30
_reference_cache: OrderedDict[tuple, dict] = OrderedDict()  # (library, config, seed) → reference outputs
SCALARS = {"int": ctypes.c_int, "long": ctypes.c_long, "float": ctypes.c_float, "double": ctypes.c_double}


def load_entry(path: str, entry: str, specs: list[CArgSpec]):
    library = ctypes.CDLL(path)
    function = getattr(library, entry)
    function.restype = None
    function.argtypes = [ctypes.c_void_p if s.is_array else SCALARS[s.base_type] for s in specs]
    return library, function


def private_copy(path: str, scratch: Path, name: str) -> str:
    """A copy under a new name: dlopen then gives fresh static state (no cache survives between jobs)."""
    target = scratch / f"{name}.so"
    shutil.copyfile(path, target)
    return str(target)


class CHarness:
    def __init__(self, job: Job, guard=None) -> None:
        self.job = job
        self.device = "cuda" if job.flavor == "cuda-library" and job.device == "cuda" else "cpu"
        self.cuda = self.device == "cuda"
        self.state = JobState()
        self.findings = self.state.findings
        self.scratch = Path(job.scratch_dir)
        self.inputs_path: str | None = None

    @property
    def seeds(self) -> list[int]:
        seeds = [s for c in self.job.configs for s in c.seeds]
        return seeds + ([self.job.timing.seed] if self.job.timing else [])

    def run(self) -> tuple[EvaluationResult, bool]:
        try:
            self.load()
            for spec in self.job.configs:
                self.check_config(spec)
            if self.job.timing is not None and all(c.ok for c in self.state.configs) and not self.findings.any_failed():
                self.time()
        except JobFailure as failure:
            return failure_result(failure, self.state, self.device, self.seeds), failure.fatal or self.state.fatal
        trials = sum(len(c.seeds) for c in self.job.configs)
        self.findings.passed("input-mutation", f"input arrays unchanged after {trials} calls")
        self.findings.passed("result-caching", "new values in the same buffers gave new outputs")
        return final_result(self.state, self.device, self.seeds), self.state.fatal

    def load(self) -> None:
        job = self.job
        if job.inputs_source:
            path = self.scratch / "inputs.py"
            path.write_text(job.inputs_source)
            self.inputs_path = str(path)
        started = _perf_counter()
        specs = job.configs[0].c_args
        try:
            self.ref_lib, self.ref_fn = load_entry(job.reference_library, job.entry, specs)
        except (OSError, AttributeError) as exc:
            raise JobFailure(Verdict.RUNTIME_ERROR, f"the C reference does not load: {exc}") from exc
        try:
            self.lib, self.fn = load_entry(private_copy(job.candidate_library, self.scratch, "candidate"), job.entry,
                                           specs)
        except (OSError, AttributeError) as exc:
            raise JobFailure(Verdict.LOAD_ERROR, f"the candidate library does not load or lacks {job.entry}: {exc}",
                             short_traceback(exc)) from exc
        self.baseline_fn = None
        if self.cuda and job.baseline_library and "naive-cuda" in (job.timing.baselines if job.timing else []):
            self.baseline_lib, self.baseline_fn = load_entry(private_copy(job.baseline_library, self.scratch, "naive"),
                                                             job.entry, specs)
        self.state.load_seconds = _perf_counter() - started

    # --- one call ---------------------------------------------------------------------------------

    def host_values(self, spec: ConfigSpec, seed: int) -> dict:
        module = c_inputs()
        specs = [module.ArgSpec(a.name, a.base_type, a.is_array, a.intent, a.size, a.value, a.init)
                 for a in spec.c_args]
        try:
            return module.make_inputs(specs, spec.params, seed, self.inputs_path)
        except Exception as exc:  # noqa: BLE001 - the problem's input rules failed: its fault, said so
            raise JobFailure(Verdict.RUNTIME_ERROR, f"input generation failed on {spec.name!r}: {exc}") from exc

    def call_reference(self, spec: ConfigSpec, values: dict, seed: int) -> dict:
        """The C reference's outputs on `values` (generated from `seed`), cached per seed within a worker:
        candidates of one batch share seeds, and a C reference at a large size can take seconds."""
        key = (self.job.reference_library, self.job.inputs_source, repr(sorted(spec.params.items())), seed)
        if key in _reference_cache:
            _reference_cache.move_to_end(key)
            return _reference_cache[key]
        host = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in values.items()}
        self.ref_fn(*[host[a.name].ctypes.data if a.is_array else host[a.name] for a in spec.c_args])
        outputs = {a.name: host[a.name] for a in spec.c_args if a.is_array and a.intent in ("out", "inout")}
        _reference_cache[key] = outputs
        while sum(v.nbytes for d in _reference_cache.values() for v in d.values()) > REFERENCE_CACHE_BYTES and \
                len(_reference_cache) > 1:
            _reference_cache.popitem(last=False)
        return outputs

    def to_buffers(self, spec: ConfigSpec, values: dict, previous: dict | None) -> dict:
        """Device (or host) tensors for the candidate; `out` arrays poisoned; previous buffers reused."""
        buffers = {}
        for arg in spec.c_args:
            if not arg.is_array:
                continue
            source = torch.from_numpy(values[arg.name])
            old = previous.get(arg.name) if previous else None
            if old is not None and old.shape == source.shape and old.dtype == source.dtype:
                buffers[arg.name] = old
                old.copy_(source)
            else:
                buffers[arg.name] = source.to(self.device, copy=True)
            if arg.intent == "out":
                poison_(buffers[arg.name])
        return buffers

    def invoke(self, fn, spec: ConfigSpec, buffers: dict, stage: str, library=None) -> None:
        args = [buffers[a.name].data_ptr() if a.is_array else a.value for a in spec.c_args]
        try:
            fn(*args)
            if self.cuda:
                torch.cuda.synchronize()
        except Exception as exc:  # noqa: BLE001 - a CUDA fault surfaces at the synchronisation
            raise JobFailure(Verdict.RUNTIME_ERROR, f"CUDA fault during {stage}: {exc}", short_traceback(exc),
                             fatal=is_cuda_fault(exc)) from exc
        library = library if library is not None else self.lib
        if self.cuda and hasattr(library, "refinery_last_error"):
            code = library.refinery_last_error()
            if code:
                library.refinery_error_string.restype = ctypes.c_char_p
                text = library.refinery_error_string(code).decode()
                raise JobFailure(Verdict.RUNTIME_ERROR, f"CUDA error during {stage}: {text} (code {code})",
                                 fatal=True)

    # --- stages -----------------------------------------------------------------------------------

    def check_config(self, spec: ConfigSpec) -> None:
        job = self.job
        result = ConfigResult(spec.name, spec.hidden, ok=True, max_abs_error=0.0, max_rel_error=0.0,
                              seeds=list(spec.seeds))
        outputs = [a for a in spec.c_args if a.is_array and a.intent in ("out", "inout")]
        inputs = [a for a in spec.c_args if a.is_array and a.intent == "in"]
        previous = previous_out = previous_ref = None
        for trial, seed in enumerate(spec.seeds):
            values = self.host_values(spec, seed)
            expected = self.call_reference(spec, values, seed)
            buffers = self.to_buffers(spec, values, previous)
            started = _perf_counter()
            self.invoke(self.fn, spec, buffers, f"the entry point on configuration {spec.name!r}")
            if trial == 0 and spec is job.configs[0]:
                self.state.load_seconds = (self.state.load_seconds or 0.0) + _perf_counter() - started
            for arg in inputs:
                if not torch.equal(buffers[arg.name].cpu(), torch.from_numpy(values[arg.name])):
                    self.findings.failed("input-mutation", f"the candidate changed input array {arg.name!r} on "
                                                           f"configuration {spec.name!r}")
            got = [buffers[a.name] for a in outputs]
            ref = [torch.from_numpy(expected[a.name]).to(self.device) for a in outputs]
            verdict = compare(got, ref, None, job.rtol, job.atol, labels=[a.name for a in outputs])
            for attr in ("max_abs_error", "max_rel_error"):
                if getattr(verdict, attr) is not None:
                    setattr(result, attr, max(getattr(result, attr) or 0.0, getattr(verdict, attr)))
            if not verdict.ok and result.ok:
                result.ok, result.first_mismatch = False, verdict.first_mismatch or None
                result.message = f"trial {trial} (seed {seed}): {verdict.message}"
            if looks_cached(verdict, got, previous_out, ref, previous_ref):
                self.findings.failed("result-caching", f"on configuration {spec.name!r} two calls on different inputs "
                                                       "(same buffers, new values) left identical outputs")
            previous, previous_ref = buffers, ref
            previous_out = [g.clone() for g in got]
        self.state.configs.append(result)

    def time(self) -> None:
        spec_t = self.job.timing
        spec = self.job.config(spec_t.config)
        values = self.host_values(spec, spec_t.seed)
        expected = self.call_reference(spec, values, spec_t.seed)
        inouts = [a.name for a in spec.c_args if a.is_array and a.intent == "inout"]
        pristine = {n: torch.from_numpy(values[n]).to(self.device) for n in inouts}
        policy = timing.TrialPolicy(spec_t.min_trials, spec_t.min_seconds, spec_t.max_trials, spec_t.max_seconds)
        sets = {"candidate": self.to_buffers(spec, values, None)}
        candidate_args = self._args(spec, sets["candidate"])
        fns = {"candidate": lambda _i: self.fn(*candidate_args)}
        if self.baseline_fn is not None:
            sets["naive-cuda"] = self.to_buffers(spec, values, None)
            naive_args = self._args(spec, sets["naive-cuda"])
            fns["naive-cuda"] = lambda _i: self.baseline_fn(*naive_args)
        host = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in values.items()}
        host_pristine = {n: values[n].copy() for n in inouts}
        reference = {"c-reference": lambda _i: self.ref_fn(*[host[a.name].ctypes.data if a.is_array else a.value
                                                              for a in spec.c_args])}

        def restore(name: str, _trial: int) -> None:
            for n in inouts:
                if name == "c-reference":
                    np.copyto(host[n], host_pristine[n])
                else:
                    sets[name][n].copy_(pristine[n])

        try:
            stats = timing.measure(fns, policy, self.device, spec_t.flush_bytes, before=restore)
        except Exception as exc:  # noqa: BLE001
            raise JobFailure(Verdict.RUNTIME_ERROR, f"CUDA fault while timing: {exc}", short_traceback(exc),
                             fatal=is_cuda_fault(exc)) from exc
        if "c-reference" in spec_t.baselines:
            # A C reference at a GPU-sized configuration can take seconds a call: a few calls tell its speed.
            ref_policy = timing.TrialPolicy(min(policy.min_trials, 10), min(policy.min_seconds, 0.5),
                                            policy.max_trials, min(policy.max_seconds, 5.0), floor_trials=1)
            stats.update(timing.measure(reference, ref_policy, "cpu", spec_t.flush_bytes, before=restore, warmup=0))
        restore("candidate", 0)
        self.invoke(self.fn, spec, sets["candidate"], "the entry point after timing")
        outputs = [a for a in spec.c_args if a.is_array and a.intent in ("out", "inout")]
        verdict = compare([sets["candidate"][a.name] for a in outputs],
                          [torch.from_numpy(expected[a.name]).to(self.device) for a in outputs], None,
                          self.job.rtol, self.job.atol, labels=[a.name for a in outputs])
        if verdict.ok:
            self.findings.passed("timed-output", "the timed buffers hold the right answer")
        else:
            self.findings.failed("timed-output", f"after the timed calls: {verdict.message}")
        escaped = timing.stream_escape(stats["candidate"])
        if escaped:
            self.findings.failed("stream-escape", escaped)
        elif stats["candidate"].wall_us is not None:
            self.findings.passed("stream-escape", f"events {stats['candidate'].median_us:.1f} µs, wall "
                                                  f"{stats['candidate'].wall_us:.1f} µs per call")
        result = next(c for c in self.state.configs if c.name == spec.name)
        result.candidate = stats["candidate"]
        result.baselines = {n: s for n, s in stats.items() if n != "candidate"}
        self.state.timed_config, self.state.candidate_us = spec.name, stats["candidate"].median_us
        baseline = next((n for n in spec_t.baselines if n in stats), None)
        if baseline is not None:
            self.state.baseline_name, self.state.baseline_us = baseline, stats[baseline].median_us
        record_energy(self.state, fns, spec_t.baselines, spec_t.energy_seconds)

    def _args(self, spec: ConfigSpec, buffers: dict) -> list:
        return [buffers[a.name].data_ptr() if a.is_array else a.value for a in spec.c_args]
