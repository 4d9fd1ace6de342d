"""What the feedback tools read (`Diagnostics`) and what they return (`Finding`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from engine.analysis import Bottleneck, Classification, DeviceCeilings, NcuSummary, RooflinePoint, StaticReport
from engine.schema.policy import read_record


@dataclass(frozen=True)
class Finding:
    """One diagnosis: the number that proves it and the one change that addresses it."""

    tool: str
    category: str  # CUDAPerf-style label, e.g. "memory/uncoalesced-access"
    title: str  # the diagnosis in a few words
    evidence: str  # the proving number, in a sentence
    suggestion: str  # the change to make
    severity: float  # 0..1 expected impact (correctness findings rank above all)
    value: float | None = None  # the proving number itself
    kernel: str | None = None
    line: int | None = None

    def render(self) -> str:
        where = f" ({self.kernel}" + (f", line {self.line}" if self.line else "") + ")" if self.kernel else ""
        return f"{self.title}{where}: {self.evidence}\n   Change: {self.suggestion}"


@dataclass(frozen=True)
class FeedbackRecord:
    """The stored `feedback` diagnostic's data: the findings behind the text the next round was sent
    (the text itself is the row's `text`, the class its `bottleneck`)."""

    findings: list[str] = field(default_factory=list)  # the tools that fired, most severe first
    details: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> FeedbackRecord:
        return read_record(cls, data)


@dataclass
class Diagnostics:
    """Everything known about one candidate at one configuration; any part may be missing."""

    static: StaticReport | None = None
    ncu: NcuSummary | None = None
    evaluation: object | None = None  # engine.schema.verdict.EvaluationResult
    problem: object | None = None  # engine.problems.Problem
    device: DeviceCeilings | None = None
    roofline: RooflinePoint | None = None
    classification: Classification | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def bottleneck(self) -> Bottleneck | None:
        return self.classification.bottleneck if self.classification else None

    def feature(self, name: str, default: float = 0.0) -> float:
        return self.static.features.get(name, default) if self.static is not None else default

    @property
    def dtype(self) -> str:
        return getattr(self.problem, "dtype", "float32") or "float32"

    @property
    def sms(self) -> int | None:
        return self.device.sms if self.device is not None else None

    def to_json(self, findings: list[Finding] | None = None) -> dict:
        """What the DB and the dashboard keep: the raw records, the class, and the findings if given."""
        return {
            "static": self.static.to_json() if self.static is not None else None,
            "ncu": asdict(self.ncu) if self.ncu is not None else None,
            "device": self.device.name if self.device is not None else None,
            "roofline": asdict(self.roofline) if self.roofline is not None else None,
            "bottleneck": str(self.bottleneck) if self.bottleneck is not None else None,
            "bottleneck_reason": self.classification.reason if self.classification else None,
            "bottleneck_measured": self.classification.measured if self.classification else None,
            "findings": [asdict(f) for f in findings or []],
            "notes": list(self.notes),
        }
