"""The records an `evaluation` row stores, and its `timing` blob as one typed record: `EvaluationTiming`.

The row's JSON columns hold the per-configuration results (`ConfigResult`, each with its
`TimingStats`) and the integrity findings (`IntegrityFinding`); everything else a result holds beyond
the scalar columns (timed configuration, baseline, kernels, seeds, build and load seconds, the flag's
reason, notes, the host it was timed on, the torch build) is the `timing` blob, read by db, the
engine's export and the app alike as an `EvaluationTiming`, never key by key. Written by
`engine.store.evaluation` (the one writer of the row); read back here under `engine.schema.policy`.

A leaf (see `engine.schema`): pydantic, the standard library and the reading policy only.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engine.schema.policy import migrated, read_record, renamed

SAMPLES_KEPT = 256  # trials kept per timing (every k-th in time order): enough for a rank test between runs


@dataclass
class TimingStats:
    """Per-launch CUDA-event (or host-clock on CPU) times of one callable on one configuration."""

    median_us: float
    iqr_us: float
    mean_us: float
    min_us: float
    trials: int
    wall_us: float | None = None  # the judge's own clock per trial (flush included): the cross-check of the events
    host_us: float | None = None  # older records: host time to issue one call in the worker's own wall loop
    clock: str = "cuda-events"  # cuda-events | perf-counter
    unexplained_us: float | None = None  # per trial: judge's clock minus events minus the baseline's loop overhead
    samples_us: list[float] | None = None  # the trials themselves (thinned to SAMPLES_KEPT), for tests between runs

    @classmethod
    def from_json(cls, data: dict | None) -> TimingStats | None:
        return None if data is None else read_record(cls, data)

    @classmethod
    def from_samples(cls, times_us: list[float], clock: str, wall_us: float | None = None,
                     unexplained_us: float | None = None) -> TimingStats:
        step = max(1, math.ceil(len(times_us) / SAMPLES_KEPT))
        ordered = sorted(times_us)
        if len(ordered) >= 4:
            q = statistics.quantiles(ordered, n=4, method="inclusive")
            iqr = q[2] - q[0]
        else:
            iqr = ordered[-1] - ordered[0]
        return cls(median_us=statistics.median(ordered), iqr_us=iqr, mean_us=statistics.fmean(ordered),
                   min_us=ordered[0], trials=len(ordered), wall_us=wall_us, clock=clock,
                   unexplained_us=unexplained_us, samples_us=[round(t, 4) for t in times_us[::step]])

    @property
    def cv(self) -> float:
        return self.iqr_us / 1.349 / self.median_us if self.median_us else 0.0


@dataclass
class ConfigResult:
    name: str
    hidden: bool
    ok: bool
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    first_mismatch: str | None = None  # "output 0 at [12, 7]: got 0.5, expected 0.25"
    message: str = ""
    candidate: TimingStats | None = None
    baselines: dict[str, TimingStats] = field(default_factory=dict)  # eager, compile, c-reference, naive-cuda
    seeds: list[int] = field(default_factory=list)  # the correctness trials' input seeds

    @classmethod
    def from_json(cls, data: dict) -> ConfigResult:
        return read_record(cls, data)


def stored_configs(stored: list[dict] | None) -> list[ConfigResult]:
    """An evaluation's `configs` column as records."""
    return read_record(list[ConfigResult], stored or [])


@dataclass
class IntegrityFinding:
    check: str  # e.g. "output-poison", "input-mutation", "result-caching", "kernel-coverage"
    passed: bool
    detail: str = ""
    kind: str = "check"  # check (decides the verdict) | evidence (a static rule the runtime checks decided)


@dataclass
class KernelLaunch:
    """A GPU kernel the profiler saw while the candidate ran, and its share of the GPU time."""

    name: str
    calls: int
    total_us: float
    share: float
    own: bool  # compiled from the candidate's source (not a torch/aten kernel)


@dataclass
class BusyProcess:
    """Processes of one name (or one of ours, by role) that used a core noticeably during the window."""

    name: str
    cpu_pct: float  # of one core, all processes of the name together
    processes: int = 1
    shares_cores: bool = True  # some of them may run on the timing cores


@dataclass
class HostRecord:
    """Where a job ran and what else ran while it was timed (`engine.verify.host` watches and words it)."""

    cores: list[int]  # where the job's processes could run
    exclusive: bool  # no other process of ours could run there
    setup: str = ""  # how the cores were chosen, in words
    window: str = "timing"  # timing | job (the job ended before timing: the whole job was watched)
    window_s: float = 0.0
    load_avg: list[float] = field(default_factory=list)  # 1, 5, 15 minutes
    others_cpu_pct: float = 0.0  # every other process together, % of one core
    busy_others: list[BusyProcess] = field(default_factory=list)
    in_flight: int = 0  # other evaluations of this pool running at the same time

    @classmethod
    def from_json(cls, data: dict | None) -> HostRecord | None:
        return read_record(cls, data) if data else None

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def interfering(self) -> list[BusyProcess]:
        """Busy processes that could have run on the timing cores."""
        return [b for b in self.busy_others if b.shares_cores]


NOISY_HOST = "shared its cores"  # the words `engine.verify.host.notes_for` warns a CPU timing with

# Older shapes of the timing blob, oldest first: each named for what it upgrades.
baseline_renamed_baseline_name = renamed("baseline", "baseline_name")  # rows written before the storage module


def flag_reason_null_is_empty(data: dict[str, Any]) -> dict[str, Any]:
    """Rows that stored no reason as null: the record's no-reason is the empty string."""
    if "flag_reason" in data and data["flag_reason"] is None:
        data["flag_reason"] = ""
    return data


TIMING_MIGRATIONS = (baseline_renamed_baseline_name, flag_reason_null_is_empty)


class EvaluationTiming(BaseModel):
    """The `timing` blob of an evaluation row. Rows without `torch_version` (or any later field) read
    with its default; keys this code does not know are ignored; a wrong value raises."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    timed_config: str | None = None  # the configuration the speedup is measured on
    baseline_name: str | None = None  # the baseline the speedup divides by (older rows: "baseline")
    kernels: list[KernelLaunch] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)
    build_seconds: float | None = None
    load_seconds: float | None = None
    worker_seconds: float | None = None
    flag_reason: str = ""
    notes: list[str] = Field(default_factory=list)
    stage_seconds: dict[str, float] = Field(default_factory=dict)
    host: HostRecord | None = None
    torch_version: str | None = None  # the torch build that ran it (None: stored before it was recorded)
    candidate: TimingStats | None = None  # the timed configuration's times (older rows: only in `configs`)
    baselines: dict[str, TimingStats] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _older_shapes(cls, data: Any) -> Any:
        return migrated({} if data is None else data, TIMING_MIGRATIONS)

    @classmethod
    def from_stored(cls, blob: dict | None) -> EvaluationTiming:
        """The record of a row's `timing` column (None: a row stored with none)."""
        return cls.model_validate(blob)

    def stored(self) -> dict[str, Any]:
        """What the `timing` column holds."""
        return self.model_dump(mode="json")

    @property
    def context(self) -> tuple[str | None, str | None]:
        """(baseline, timed configuration): two speedups compare only within one context."""
        return self.baseline_name, self.timed_config

    @property
    def noisy_host_notes(self) -> list[str]:
        """The warnings that a CPU timing shared its cores with busy processes: shown beside the speedup
        they weaken, not only inside the stored timing."""
        return [note for note in self.notes if NOISY_HOST in note]

    def timed_stats(self, configs: list[ConfigResult]) -> TimingStats | None:
        """The candidate's times on the timed configuration: the blob's copy, else (older rows) the
        first configuration that was timed."""
        return self.candidate or next((c.candidate for c in configs if c.candidate is not None), None)
