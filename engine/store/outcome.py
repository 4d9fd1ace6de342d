"""Everything learned about one proposal in one step, and its mapping onto the stored rows."""

from __future__ import annotations

from dataclasses import dataclass, field

from db.models import Diagnostic, Evaluation
from engine.analysis import NcuRecord, RooflineRecord, StaticReport
from engine.feedback.model import FeedbackRecord, Finding
from engine.reward.score import RewardBreakdown
from engine.schema.verdict import EvaluationResult
from engine.store.evaluation import evaluation_row as stored_evaluation_row
from engine.verify.judge.energy_meter import EnergyRecord


@dataclass
class RoundOutcome:
    result: EvaluationResult
    reward: RewardBreakdown
    static: StaticReport | None = None  # its features feed the ranker
    roofline: RooflineRecord | None = None
    ncu: NcuRecord | None = None
    energy: EnergyRecord | None = None
    feedback_text: str = ""
    findings: list[str] = field(default_factory=list)
    finding_details: list[Finding] = field(default_factory=list)
    bottleneck: str | None = None

    def evaluation_row(self) -> Evaluation:
        row = stored_evaluation_row(self.result)
        row.reward, row.reward_components = self.reward.total, self.reward.to_json()
        return row

    def diagnostic_rows(self) -> list[Diagnostic]:
        """One row per diagnostic kind, each holding its record's JSON (`engine.store.diagnostics` reads them back)."""
        rows = []
        for kind, record in (("static", self.static), ("roofline", self.roofline), ("ncu", self.ncu),
                             ("energy", self.energy)):
            if record is not None:
                bottleneck = self.bottleneck if kind == "roofline" else None
                rows.append(Diagnostic(kind=kind, data=record.to_json(), bottleneck=bottleneck))
        feedback = FeedbackRecord(self.findings, self.finding_details)
        rows.append(Diagnostic(kind="feedback", bottleneck=self.bottleneck, text=self.feedback_text,
                               data=feedback.to_json()))
        return rows
