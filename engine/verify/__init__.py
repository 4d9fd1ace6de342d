"""Verify: judging candidates, with the judge standing outside the candidate.

The layout is the trust boundary. `judge/` is the trusted side (inputs from seeds, the reference,
comparisons, the clock, the verdict); the runner it talks to is in `engine/untrusted/runner` (what runs
inside a candidate's sandbox, importing nothing from the trusted side) and `engine/wire` is all the two
share. Around the judge, in this folder:
`evaluate` / `evaluate_many` (candidate source → one `EvaluationResult`; `Verifier.evaluate_stream` takes
candidates as they arrive and builds each at once), `pool` (the sandboxed processes), `prepare` (the job),
`static_rules`, the worker pool to use (`scale`: local or Ray) and the `report`. The result records are the
record schema's (`engine.schema.verdict`); their rows are the store's (`engine.store.evaluation`).
Exports load lazily, so importing the package pulls in nothing heavy.
"""

from __future__ import annotations

from engine.lazy_exports import lazy_getattr

_EXPORTS = {
    "evaluate": "engine.verify.evaluate", "evaluate_many": "engine.verify.evaluate",
    "VerifyOptions": "engine.verify.evaluate", "Verifier": "engine.verify.evaluate",
    "WorkerPool": "engine.verify.pool", "PoolConfig": "engine.verify.pool", "JobOutcome": "engine.verify.pool",
    "Job": "engine.verify.judge.job", "EvaluationResult": "engine.schema.verdict", "Verdict": "engine.schema.verdict",
    "check_static": "engine.verify.static_rules", "make_job": "engine.verify.prepare",
    "write_run_once_job": "engine.verify.prepare",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr("engine.verify", _EXPORTS)
