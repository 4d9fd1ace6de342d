"""Storing verification results: `EvaluationResult` ↔ the `evaluation` row (and its `candidate`).

Scalar columns carry what is filtered and charted (verdict, speedup, times, device, flagged); the
per-configuration results and integrity findings go to their JSON columns; everything else the
record holds (timed configuration, baselines with their spread, kernels, seeds, build and load
seconds, the flag's reason, notes, the host: cores it was timed on and what else ran) goes to the
`timing` blob as an `EvaluationTiming` (`engine.schema.evaluation`), so a stored row round-trips. The
mapping lives here, beside the records, because db knows no engine type; older rows' shapes are
migrated by the timing record itself.
"""

from __future__ import annotations

from sqlmodel import select

from db.evaluations import source_hash
from db.models import Candidate, Evaluation
from db.session import session_scope
from engine.schema.evaluation import EvaluationTiming, stored_configs
from engine.schema.policy import read_record
from engine.schema.verdict import EvaluationResult, IntegrityFinding, Verdict


def evaluation_timing(result: EvaluationResult) -> EvaluationTiming:
    """The `timing` record of `result`, with the timed configuration's times copied in for readers of
    the row alone."""
    timed = next((c for c in result.configs if c.candidate is not None and c.name == result.timed_config),
                 next((c for c in result.configs if c.candidate is not None), None))
    return EvaluationTiming(
        timed_config=result.timed_config, baseline_name=result.baseline_name, kernels=result.kernels,
        seeds=result.seeds, build_seconds=result.build_seconds, load_seconds=result.load_seconds,
        worker_seconds=result.worker_seconds, flag_reason=result.flag_reason, notes=result.notes,
        stage_seconds=result.stage_seconds, host=result.host, torch_version=result.torch_version,
        candidate=timed.candidate if timed is not None else None,
        baselines=timed.baselines if timed is not None else {})


def evaluation_row(result: EvaluationResult, candidate_id: int | None = None) -> Evaluation:
    """The row for `result` (not yet added to a session): the one writer of an evaluation row, for the CLI's
    `verify` and for a run's rounds alike (a run adds the reward)."""
    data = result.to_json()
    return Evaluation(candidate_id=candidate_id, verdict=str(result.verdict), message=result.message, log=result.log,
                      configs=data["configs"], integrity=data["integrity"], candidate_us=result.candidate_us,
                      baseline_us=result.baseline_us, speedup=result.speedup,
                      timing=evaluation_timing(result).stored(), device=result.device, flagged=result.flagged)


def result_from_row(row: Evaluation) -> EvaluationResult:
    """The record back from a stored row (what `evaluation_row` wrote, or an older version of it)."""
    timing = EvaluationTiming.from_stored(row.timing)
    return EvaluationResult(
        verdict=Verdict(row.verdict), message=row.message, log=row.log or "", configs=stored_configs(row.configs),
        integrity=read_record(list[IntegrityFinding], row.integrity or []), kernels=list(timing.kernels),
        timed_config=timing.timed_config, candidate_us=row.candidate_us, baseline_us=row.baseline_us,
        baseline_name=timing.baseline_name, speedup=row.speedup, device=row.device, flagged=row.flagged,
        flag_reason=timing.flag_reason, build_seconds=timing.build_seconds, seeds=list(timing.seeds),
        load_seconds=timing.load_seconds, worker_seconds=timing.worker_seconds, notes=list(timing.notes),
        stage_seconds=dict(timing.stage_seconds), host=timing.host, torch_version=timing.torch_version)


def store_evaluation(result: EvaluationResult, *, problem_slug: str | None = None, source: str | None = None,
                     language: str = "python", candidate_id: int | None = None, origin: str = "human",
                     strategy: str | None = None, url: str | None = None) -> tuple[int, int]:
    """Store `result`; with no `candidate_id` a candidate row is made from `source`.

    Returns (candidate id, evaluation id).
    """
    with session_scope(url) as session:
        if candidate_id is None:
            if problem_slug is None or source is None:
                raise ValueError("a new candidate needs problem_slug and source")
            candidate = Candidate(problem_slug=problem_slug, origin=origin, strategy=strategy, language=language,
                                  source=source, source_hash=source_hash(source))
            session.add(candidate)
            session.flush()
            candidate_id = candidate.id
        row = evaluation_row(result, candidate_id)
        session.add(row)
        session.flush()
        return candidate_id, row.id


def latest_result(candidate_id: int, url: str | None = None) -> EvaluationResult | None:
    """The newest stored evaluation of a candidate, as the record."""
    with session_scope(url) as session:
        row = session.exec(select(Evaluation).where(Evaluation.candidate_id == candidate_id)
                           .order_by(Evaluation.id.desc())).first()
        return None if row is None else result_from_row(row)
