"""Storing verification results: `EvaluationResult` ↔ the `evaluation` row (and its `candidate`).

Scalar columns carry what is filtered and charted (verdict, speedup, times, device, flagged); the
per-configuration results and integrity findings go to their JSON columns; everything else the
record holds (timed configuration, baselines with their spread, kernels, seeds, build and load
seconds, the flag's reason, notes, the host: cores it was timed on and what else ran) goes to the
`timing` blob, so a stored row round-trips. The mapping lives here, beside the records, because db
knows no engine type.
"""

from __future__ import annotations

from sqlmodel import select

from db.evaluations import source_hash
from db.models import Candidate, Evaluation
from db.session import session_scope
from engine.verify.host import HostRecord
from engine.verify.records import ConfigResult, EvaluationResult, IntegrityFinding, KernelLaunch, Verdict

_TIMING_KEYS = ("timed_config", "baseline_name", "kernels", "seeds", "build_seconds", "load_seconds",
                "worker_seconds", "flag_reason", "notes", "stage_seconds", "host", "torch_version")


def evaluation_row(result: EvaluationResult, candidate_id: int | None = None) -> Evaluation:
    """The row for `result` (not yet added to a session): the one writer of an evaluation row, for the CLI's
    `verify` and for a run's rounds alike (a run adds the reward)."""
    data = result.to_json()
    timing = {key: data[key] for key in _TIMING_KEYS}
    timed = next((c for c in data["configs"] if c.get("candidate") and c["name"] == data.get("timed_config")),
                 next((c for c in data["configs"] if c.get("candidate")), None))
    if timed is not None:
        timing["candidate"] = timed["candidate"]
        timing["baselines"] = timed["baselines"]
    return Evaluation(candidate_id=candidate_id, verdict=str(result.verdict), message=result.message, log=result.log,
                      configs=data["configs"], integrity=data["integrity"], candidate_us=result.candidate_us,
                      baseline_us=result.baseline_us, speedup=result.speedup, timing=timing, device=result.device,
                      flagged=result.flagged)


def result_from_row(row: Evaluation) -> EvaluationResult:
    """The record back from a stored row (what `evaluation_row` wrote)."""
    timing = dict(row.timing or {})
    return EvaluationResult(
        verdict=Verdict(row.verdict), message=row.message, log=row.log or "",
        configs=[ConfigResult.from_json(c) for c in row.configs or []],
        integrity=[IntegrityFinding(**f) for f in row.integrity or []],
        kernels=[KernelLaunch(**k) for k in timing.get("kernels") or []],
        timed_config=timing.get("timed_config"), candidate_us=row.candidate_us, baseline_us=row.baseline_us,
        baseline_name=timing.get("baseline_name") or timing.get("baseline"),  # older rows: "baseline"
        speedup=row.speedup, device=row.device, flagged=row.flagged,
        flag_reason=timing.get("flag_reason") or "", build_seconds=timing.get("build_seconds"),
        seeds=list(timing.get("seeds") or []), load_seconds=timing.get("load_seconds"),
        worker_seconds=timing.get("worker_seconds"), notes=list(timing.get("notes") or []),
        stage_seconds=dict(timing.get("stage_seconds") or {}), host=HostRecord.from_json(timing.get("host")),
        torch_version=timing.get("torch_version"))


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
