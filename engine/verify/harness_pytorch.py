"""The worker side of a PyTorch problem: load `ModelNew`, check it on every configuration, profile it,
time it against torch eager (and torch.compile when asked) on the same inputs.

Per configuration and trial: fresh inputs from a recorded seed (trials after the first write the new
values into the previous trial's tensors, so a cache keyed on pointers or shapes returns stale
data), the reference on its own clones (float64 on upcast inputs where it runs, plus the native
precision for the rounding allowance), the allocator scrubbed, the candidate called on the real
inputs, then: outputs compared, inputs compared with a snapshot, outputs compared with the
previous trial's. Candidate code runs only inside `audit.watching()` and is followed by a guard check.
"""

from __future__ import annotations

import copy
import os
import time
import types
from pathlib import Path

import torch

from engine.verify import audit, timing
from engine.verify.correctness import as_list, compare, looks_cached, same_values
from engine.verify.energy_calls import record_energy
from engine.verify.guards import ProcessGuard
from engine.verify.jobs import ConfigSpec, Job
from engine.verify.outcome import Findings, JobFailure, JobState, failure_from, failure_result, final_result
from engine.verify.problem_code import load_reference_module
from engine.verify.profile import MIN_OWN_SHARE, heavy_ops, kernel_launches, profile_call
from engine.verify.records import ConfigResult, EvaluationResult, Verdict
from engine.verify.scrub import scrub_free_blocks

_perf_counter = time.perf_counter
TF32_FLAGS = ("allow_tf32", "float32_matmul_precision")


def clone_all(values: list) -> list:
    return [v.clone() if isinstance(v, torch.Tensor) else copy.deepcopy(v) for v in values]


def upcast(values: list) -> list:
    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def same_inputs(a: list, b: list) -> bool:
    return all(same_values(x, y) for x, y in zip(a, b, strict=True) if isinstance(x, torch.Tensor))


def detach(outputs):
    items = [o.detach() if isinstance(o, torch.Tensor) else o for o in as_list(outputs)]
    return items if isinstance(outputs, list | tuple) else items[0]


def make_inputs(module, seed: int, device: str) -> list:
    """get_inputs() seeded with `seed`, created directly on the device (fast for large configs)."""
    torch.manual_seed(seed)
    try:
        with torch.device(device):
            values = list(module.get_inputs())
    except (RuntimeError, TypeError):
        torch.manual_seed(seed)
        values = list(module.get_inputs())
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def reuse_buffers(previous: list | None, fresh: list) -> list:
    """Write `fresh` into the previous trial's tensors where shapes match: same pointers, new values."""
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


class PytorchHarness:
    def __init__(self, job: Job, guard: ProcessGuard) -> None:
        self.job, self.guard = job, guard
        self.device = job.device
        self.cuda = job.device == "cuda"
        self.state = JobState()
        self.findings: Findings = self.state.findings
        self.module: types.ModuleType | None = None
        self.kept: dict[str, tuple] = {}  # config → (reference module, reference, candidate, float64 reference)
        self.first_call_pending = True

    @property
    def seeds(self) -> list[int]:
        seeds = [self.job.init_seed] + [s for c in self.job.configs for s in c.seeds]
        return seeds + ([self.job.timing.seed] if self.job.timing else [])

    def run(self) -> tuple[EvaluationResult, bool]:
        """(result, fatal): fatal means the worker's process state can no longer be trusted."""
        try:
            self.load()
            for spec in self.job.configs:
                self.check_config(spec)
            clean = all(c.ok for c in self.state.configs) and not self.findings.any_failed()
            if self.job.profile and clean:
                self.profile()
            if self.job.timing is not None and clean and not self.findings.any_failed():
                self.time()
        except JobFailure as failure:
            return failure_result(failure, self.state, self.device, self.seeds), failure.fatal or self.state.fatal
        self.mark_passed()
        return final_result(self.state, self.device, self.seeds), self.state.fatal

    # --- stages -------------------------------------------------------------------------------------

    def load(self) -> None:
        job = self.job
        path = Path(job.scratch_dir) / "candidate.py"
        path.write_text(job.candidate_source)
        if job.extensions_dir:
            os.environ["TORCH_EXTENSIONS_DIR"] = job.extensions_dir
            os.environ["TORCH_CUDA_ARCH_LIST"] = job.arch_list
        started = _perf_counter()
        try:
            code = compile(job.candidate_source, str(path), "exec")
        except SyntaxError as exc:
            raise JobFailure(Verdict.LOAD_ERROR, f"Python syntax error at line {exc.lineno}: {exc.msg}") from exc
        module = types.ModuleType("candidate")
        module.__file__ = str(path)
        with audit.watching(allow_processes=job.flavor == "load_inline"):
            try:
                exec(code, module.__dict__)  # noqa: S102 - candidate code, in the sandboxed worker
            except (Exception, SystemExit) as exc:
                raise failure_from(exc, "import") from exc
        self.state.load_seconds = _perf_counter() - started
        self.guard_check("import")
        if not isinstance(getattr(module, "ModelNew", None), type):
            raise JobFailure(Verdict.LOAD_ERROR, "the module defines no class ModelNew")
        self.module = module

    def check_config(self, spec: ConfigSpec) -> None:
        job = self.job
        ref_mod, ref, cand = self.models(spec)
        ref64 = self.double(ref)
        result = ConfigResult(spec.name, spec.hidden, ok=True, max_abs_error=0.0, max_rel_error=0.0,
                              seeds=list(spec.seeds))
        previous_inputs = previous_out = previous_ref = None
        for trial, seed in enumerate(spec.seeds):
            inputs = reuse_buffers(previous_inputs, make_inputs(ref_mod, seed, self.device))
            ref_out, ref64_out, ref_mutates = self.reference(ref, ref64, inputs)
            snapshot = clone_all(inputs)
            if self.cuda:
                scrub_free_blocks()
            started = _perf_counter()
            out = self.call(cand, inputs, f"forward on configuration {spec.name!r}")
            if self.first_call_pending:
                self.state.load_seconds = (self.state.load_seconds or 0.0) + _perf_counter() - started
                self.first_call_pending = False
            self.guard_check(f"forward on {spec.name!r}")
            if not ref_mutates and not same_inputs(inputs, snapshot):
                self.findings.failed("input-mutation", f"ModelNew.forward changed its inputs on configuration "
                                                       f"{spec.name!r} (trial {trial})")
            verdict = compare(out, ref64_out if ref64_out is not None else ref_out, ref_out, job.rtol, job.atol)
            for attr in ("max_abs_error", "max_rel_error"):
                if getattr(verdict, attr) is not None:
                    setattr(result, attr, max(getattr(result, attr) or 0.0, getattr(verdict, attr)))
            if not verdict.ok and result.ok:
                result.ok, result.first_mismatch = False, verdict.first_mismatch
                result.message = f"trial {trial} (seed {seed}): {verdict.message}"
            if looks_cached(verdict, out, previous_out, ref_out, previous_ref):
                self.findings.failed("result-caching", f"on configuration {spec.name!r} two calls on different "
                                                       "inputs (same tensors, new values) returned identical outputs")
            previous_inputs, previous_ref = inputs, ref_out
            previous_out = [o.clone() if isinstance(o, torch.Tensor) else o for o in as_list(detach(out))]
        self.state.configs.append(result)
        if (job.timing is not None and spec.name == job.timing.config) or (job.timing is None and not self.kept):
            self.kept[spec.name] = (ref_mod, ref, cand, ref64)

    def profile(self) -> None:
        """One profiled call each of reference and candidate: ops the candidate may not call, kernels it ran."""
        name = self.job.timing.config if self.job.timing else next(iter(self.kept))
        ref_mod, ref, cand, _ = self.kept[name]
        seed = (self.job.timing.seed if self.job.timing else self.job.init_seed) + 1000
        inputs = make_inputs(ref_mod, seed, self.device)
        ref_inputs = clone_all(inputs)
        with torch.no_grad():
            ref_profile = profile_call(lambda: ref(*ref_inputs), self.cuda)
            with audit.watching():
                try:
                    cand_profile = profile_call(lambda: cand(*inputs), self.cuda)
                except (Exception, SystemExit) as exc:
                    raise failure_from(exc, f"profiled forward on {name!r}") from exc
        self.guard_check("profiled forward")
        blocked = sorted(heavy_ops(ref_profile, self.job.allowed_torch_ops) & cand_profile.ops)
        if blocked:
            self.findings.failed("torch-op", f"ModelNew called the reference's own torch ops {', '.join(blocked)} "
                                             "(not allowed by this problem)")
        else:
            self.findings.passed("torch-op", f"none of the reference's ops called ({len(cand_profile.ops)} ops seen)")
        if not self.cuda:
            return
        self.state.kernels = kernel_launches(cand_profile, self.job.own_kernels)
        own = [k for k in self.state.kernels if k.own]
        share = sum(k.share for k in own)
        if not own:
            names = ", ".join(self.job.own_kernels) or "none found in the source"
            ran = ", ".join(k.name for k in self.state.kernels[:3]) or "nothing"
            self.findings.failed("kernel-coverage", f"none of the candidate's own kernels ({names}) ran; GPU work "
                                                    f"came from {ran}")
        elif not self.job.allowed_torch_ops and share < MIN_OWN_SHARE:
            self.findings.failed("kernel-coverage", f"the candidate's own kernels are {share:.0%} of its GPU time "
                                                    f"(at least {MIN_OWN_SHARE:.0%} required)")
        else:
            self.findings.passed("kernel-coverage", f"own kernels {share:.0%} of GPU time")

    def time(self) -> None:
        spec_t = self.job.timing
        ref_mod, ref, cand, ref64 = self.kept[spec_t.config]
        sets = [make_inputs(ref_mod, spec_t.seed + k, self.device) for k in range(max(1, spec_t.input_sets))]
        count = len(sets)

        def candidate(i: int):
            with audit.watching():
                return cand(*sets[i % count])

        fns = {"candidate": candidate}
        for name in spec_t.baselines:
            if name == "eager":
                fns["eager"] = lambda i: ref(*sets[i % count])
            elif name == "compile":
                try:  # compiled and warmed up before any candidate call is watched: its threads are the harness's
                    compiled = torch.compile(ref)
                    with torch.no_grad():
                        compiled(*sets[0])
                    self.guard.accept_current_threads()
                    fns["compile"] = lambda i, compiled=compiled: compiled(*sets[i % count])
                except Exception as exc:  # noqa: BLE001 - a baseline that cannot compile is a note, not a failure
                    self.state.notes.append(f"torch.compile baseline unavailable: {type(exc).__name__}: {exc}")
        policy = timing.TrialPolicy(spec_t.min_trials, spec_t.min_seconds, spec_t.max_trials, spec_t.max_seconds)
        try:
            with torch.no_grad():
                stats = timing.measure(fns, policy, self.device, spec_t.flush_bytes)
        except (Exception, SystemExit) as exc:
            failure = failure_from(exc, f"timing on {spec_t.config!r}")
            self.state.fatal = self.state.fatal or failure.fatal
            raise failure from exc
        self.guard_check("timed calls")
        self.validate_timed(ref, ref64, cand, sets, spec_t.config)
        escaped = timing.stream_escape(stats["candidate"])
        if escaped:
            self.findings.failed("stream-escape", escaped)
        elif stats["candidate"].wall_us is not None:
            self.findings.passed("stream-escape", f"events {stats['candidate'].median_us:.1f} µs, device-synchronised "
                                                  f"wall {stats['candidate'].wall_us:.1f} µs per call")
        result = next(c for c in self.state.configs if c.name == spec_t.config)
        result.candidate = stats["candidate"]
        result.baselines = {n: s for n, s in stats.items() if n != "candidate"}
        self.state.timed_config = spec_t.config
        self.state.candidate_us = stats["candidate"].median_us
        baseline = next((n for n in spec_t.baselines if n in stats), None)
        if baseline is not None:
            self.state.baseline_name, self.state.baseline_us = baseline, stats[baseline].median_us
        with torch.no_grad():
            record_energy(self.state, fns, spec_t.baselines, spec_t.energy_seconds)

    def validate_timed(self, ref, ref64, cand, sets: list, config: str) -> None:
        """The timed calls' inputs give right answers too (no shortcut taken only while being timed)."""
        for k, inputs in enumerate(sets):
            ref_out, ref64_out, _ = self.reference(ref, ref64, inputs)
            out = self.call(cand, inputs, f"forward on timing input set {k}")
            verdict = compare(out, ref64_out if ref64_out is not None else ref_out, ref_out, self.job.rtol,
                              self.job.atol)
            if not verdict.ok:
                self.findings.failed("timed-output", f"on the timed configuration {config!r}, input set {k}: "
                                                     f"{verdict.message}")
                return
        self.findings.passed("timed-output", f"{len(sets)} timing input sets checked")

    # --- helpers ------------------------------------------------------------------------------------

    def models(self, spec: ConfigSpec):
        job = self.job
        try:
            ref_mod = load_reference_module(job.reference_source, spec.params, job.reference_path)
            init = list(ref_mod.get_init_inputs())
            torch.manual_seed(job.init_seed)
            ref = ref_mod.Model(*init).to(self.device).eval()
        except Exception as exc:  # noqa: BLE001 - a broken reference is the problem's fault, said so
            raise JobFailure(Verdict.RUNTIME_ERROR, f"the reference failed on configuration {spec.name!r}: "
                                                    f"{type(exc).__name__}: {exc}") from exc
        torch.manual_seed(job.init_seed)
        with audit.watching():
            try:
                cand = self.module.ModelNew(*init)
                if isinstance(cand, torch.nn.Module):
                    cand = cand.to(self.device)
            except (Exception, SystemExit) as exc:
                raise failure_from(exc, f"ModelNew(*get_init_inputs()) on configuration {spec.name!r}") from exc
        self.guard_check(f"ModelNew() on {spec.name!r}")
        return ref_mod, ref, cand

    def double(self, ref):
        try:
            return copy.deepcopy(ref).double()
        except Exception:  # noqa: BLE001 - some modules cannot be upcast; the native reference is used then
            return None

    def reference(self, ref, ref64, inputs: list):
        """(native output, float64 output or None, whether the reference itself changes its inputs)."""
        clones = clone_all(inputs)
        try:
            with torch.no_grad():
                out = detach(ref(*clones))
        except Exception as exc:  # noqa: BLE001
            raise JobFailure(Verdict.RUNTIME_ERROR, f"the reference raised {type(exc).__name__}: {exc}") from exc
        mutated = not same_inputs(clones, inputs)
        out64 = None
        if ref64 is not None and any(isinstance(o, torch.Tensor) and o.is_floating_point() for o in as_list(out)):
            try:
                with torch.no_grad():
                    out64 = detach(ref64(*upcast(inputs)))
            except Exception:  # noqa: BLE001 - op without a float64 kernel: compare with the native reference
                out64 = None
            if out64 is not None and len(as_list(out64)) != len(as_list(out)):
                out64 = None
        if self.cuda:
            torch.cuda.synchronize()
        return out, out64, mutated

    def call(self, cand, inputs: list, stage: str):
        try:
            with audit.watching(), torch.no_grad():
                out = cand(*inputs)
            if self.cuda:
                torch.cuda.synchronize()
        except (Exception, SystemExit) as exc:
            failure = failure_from(exc, stage)
            self.state.fatal = self.state.fatal or failure.fatal
            raise failure from exc
        return self.plain(out, stage)

    def plain(self, out, stage: str):
        """Outputs as plain tensors; a tensor subclass (deferred or lazy computation) is an integrity failure."""
        items = as_list(out)
        odd = [type(o).__name__ for o in items if isinstance(o, torch.Tensor) and type(o) not in (torch.Tensor,
                                                                                                 torch.nn.Parameter)]
        if not odd:
            return out
        self.findings.failed("tensor-subclass", f"during {stage}: returned {', '.join(odd)} instead of a plain tensor")
        with torch._C.DisableTorchFunctionSubclass():
            plain = [o.as_subclass(torch.Tensor) if isinstance(o, torch.Tensor) else o for o in items]
        return plain if isinstance(out, list | tuple) else plain[0]

    def guard_check(self, stage: str) -> None:
        patched, flags, threads = self.guard.check()
        if patched:
            self.findings.failed("monkeypatch", f"during {stage}: replaced {', '.join(patched)}")
            self.state.fatal = True
        if flags and not (self.job.dtype == "tf32" and all(any(t in f for t in TF32_FLAGS) for f in flags)):
            self.findings.failed("precision-flags", f"during {stage}: changed {'; '.join(flags)}")
            self.state.fatal = True
        if threads:
            self.findings.failed("threads", f"during {stage}: started threads {', '.join(threads)}")
            self.state.fatal = True
        events = audit.take_events()
        if events:
            self.findings.failed("sandbox-access", f"during {stage}: {'; '.join(events[:5])}")

    def mark_passed(self) -> None:
        trials = sum(len(c.seeds) for c in self.job.configs)
        self.findings.passed("input-mutation", f"inputs unchanged after {trials} calls")
        if any(len(c.seeds) > 1 for c in self.job.configs):
            self.findings.passed("result-caching", "new values in the same tensors gave new outputs")
        for check in ("monkeypatch", "precision-flags", "threads", "sandbox-access", "tensor-subclass"):
            self.findings.passed(check)
