"""Everything learned about one proposal in one step, and its mapping onto the stored rows."""

from __future__ import annotations

from dataclasses import dataclass, field

from db.models import Diagnostic, Evaluation
from engine.reward import RewardBreakdown
from engine.verify.records import EvaluationResult


@dataclass
class RoundOutcome:
    result: EvaluationResult
    reward: RewardBreakdown
    static: dict | None = None  # the static report (its "features" feed the ranker)
    roofline: dict | None = None
    ncu: dict | None = None
    energy: dict | None = None
    feedback_text: str = ""
    findings: list[str] = field(default_factory=list)
    finding_details: list[dict] = field(default_factory=list)
    bottleneck: str | None = None

    def evaluation_row(self) -> Evaluation:
        r = self.result
        data = r.to_json()
        return Evaluation(
            verdict=str(r.verdict), message=r.message, log=r.log, configs=data["configs"], integrity=data["integrity"],
            candidate_us=r.candidate_us, baseline_us=r.baseline_us, speedup=r.speedup,
            timing={"timed_config": r.timed_config, "baseline": r.baseline_name, "kernels": data["kernels"],
                    "seeds": r.seeds, "build_seconds": r.build_seconds, "flag_reason": r.flag_reason,
                    "notes": r.notes, "host": data["host"]},
            reward=self.reward.total, reward_components=self.reward.to_json(), device=r.device, flagged=r.flagged)

    def diagnostic_rows(self) -> list[Diagnostic]:
        rows = []
        for kind, data in (("static", self.static), ("roofline", self.roofline), ("ncu", self.ncu),
                           ("energy", self.energy)):
            if data is not None:
                bottleneck = self.bottleneck if kind == "roofline" else None
                rows.append(Diagnostic(kind=kind, data=data, bottleneck=bottleneck))
        rows.append(Diagnostic(kind="feedback", bottleneck=self.bottleneck, text=self.feedback_text,
                               data={"findings": self.findings, "details": self.finding_details}))
        return rows
