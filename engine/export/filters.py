"""What goes into an export: problems, label sources, agreement, verdicts, dates, devices."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

LABEL_SOURCES = ("human", "measured")


@dataclass(frozen=True)
class ExportFilters:
    problems: tuple[str, ...] = ()  # empty: all
    label_sources: tuple[str, ...] = LABEL_SOURCES  # preferences: which pairs
    min_agreement: float = 0.0  # preferences: a human pair's labeler weight (agreement) must reach this
    verdicts: tuple[str, ...] = ()  # candidates/ranked: empty = all
    since: datetime | None = None
    until: datetime | None = None
    devices: tuple[str, ...] = field(default=())

    def to_json(self) -> dict:
        data = asdict(self)
        for key in ("since", "until"):
            data[key] = data[key].isoformat() if data[key] else None
        return data

    def wants_problem(self, slug: str) -> bool:
        return not self.problems or slug in self.problems

    def wants_device(self, device: str | None) -> bool:
        return not self.devices or device in self.devices

    def wants_verdict(self, verdict: str | None) -> bool:
        return not self.verdicts or verdict in self.verdicts

    def wants_time(self, moment: datetime | None) -> bool:
        if moment is None:
            return self.since is None and self.until is None
        moment = moment.replace(tzinfo=None)
        if self.since and moment < self.since.replace(tzinfo=None):
            return False
        return not (self.until and moment > self.until.replace(tzinfo=None))
