"""Verify: the sandboxed worker pool and everything measured on the GPU.

Offers `evaluate` / `evaluate_many` (candidate source → one `EvaluationResult` each),
`WorkerPool` (long-lived sandboxed workers), the job and result records, and `run_once` for the
profiler. Exports load lazily: the worker process imports modules of this package and must not
pull in the parent-side ones (settings, the problem loader).
"""

from __future__ import annotations

from engine.lazy_exports import lazy_getattr

_EXPORTS = {
    "evaluate": "engine.verify.evaluate", "evaluate_many": "engine.verify.evaluate",
    "VerifyOptions": "engine.verify.evaluate", "Verifier": "engine.verify.evaluate",
    "WorkerPool": "engine.verify.pool", "PoolConfig": "engine.verify.pool", "JobOutcome": "engine.verify.pool",
    "Job": "engine.verify.jobs", "EvaluationResult": "engine.verify.records", "Verdict": "engine.verify.records",
    "check_static": "engine.verify.static_rules", "make_job": "engine.verify.prepare",
    "write_run_once_job": "engine.verify.prepare",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr("engine.verify", _EXPORTS)
