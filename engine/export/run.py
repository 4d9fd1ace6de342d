"""One export: a folder of its own, the kind's rows streamed through a writer and counted, the card, the record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from db.models import ExportRecord
from db.session import session_scope
from engine.export import kinds
from engine.export.card import pair_rules, write_card
from engine.export.filters import ExportFilters
from engine.export.folders import claim_folder, new_export_folder
from engine.export.schemas import SCHEMAS
from engine.export.writers import write_jsonl, write_parquet

FORMATS = ("jsonl", "parquet")


UNITS = {"preferences": "pairs", "candidates": "candidates", "ranked": "ranked rows", "trajectories": "trajectories"}


def counted(kind: str, counts: dict[str, int]) -> str:
    """How many records an export holds, in the kind's own unit: a preference pair is written twice (its
    standard and its conversational form), and is one pair, not two rows."""
    if kind == "preferences" and "standard" in counts:
        n = counts["standard"]
        both = " (each in standard and conversational form)" if "conversational" in counts else ""
        return f"{n:,} {UNITS[kind]}{both}"
    return f"{sum(counts.values()):,} {UNITS.get(kind, 'rows')}"


@dataclass
class ExportResult:
    kind: str
    format: str
    out_dir: Path
    files: dict[str, str]
    counts: dict[str, int]
    tallies: dict[str, dict[str, int]] = field(default_factory=dict)

    def describe(self) -> str:
        return counted(self.kind, self.counts)


TALLY_KEYS = {  # what the card counts the rows by, per kind
    "preferences": ("source", "target", "device", "test", "problem"),
    "candidates": ("target", "language", "device", "verdict", "origin", "problem"),
    "ranked": ("target", "language", "device", "verdict", "origin", "problem"),
    "trajectories": ("target", "device", "proposer", "strategy", "problem"),
}


class _Tally:
    """Counts the rows by each of the kind's keys as they stream past, so the card describes what was
    written, not what was asked for."""

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.counters: dict[str, Counter] = {key: Counter() for key in keys}

    def watch(self, rows: Iterable[dict]) -> Iterator[dict]:
        for row in rows:
            for key, counter in self.counters.items():
                counter[str(row.get(key)) if row.get(key) is not None else "(none)"] += 1
            yield row

    def tallies(self) -> dict[str, dict[str, int]]:
        return {key: dict(counter.most_common()) for key, counter in self.counters.items() if counter}


def _row_sources(kind: str, filters: ExportFilters) -> dict[str, Callable[[], Iterator[dict]]]:
    if kind == "preferences":
        return {"standard": lambda: kinds.preference_rows(filters),
                "conversational": lambda: kinds.preference_rows(filters, conversational=True)}
    producer = {"candidates": kinds.candidate_rows, "ranked": kinds.ranked_rows,
                "trajectories": kinds.trajectory_rows}[kind]
    return {"default": lambda: producer(filters)}


def export_dataset(kind: str, fmt: str, out_dir: Path | None = None, filters: ExportFilters | None = None,
                   progress: Callable[[str, int], None] | None = None) -> ExportResult:
    """Write one export into a folder of its own: `out_dir` if given (it must be new or empty), else a new
    `exports/{kind}-{UTC time}` folder under the data folder. A folder is never reused, so an export
    never mixes with an earlier one's files."""
    if kind not in SCHEMAS:
        raise ValueError(f"unknown export kind {kind!r}; one of {', '.join(SCHEMAS)}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use jsonl or parquet")
    filters = filters or ExportFilters()
    out_dir = claim_folder(Path(out_dir)) if out_dir is not None else new_export_folder(kind)
    (out_dir / "data").mkdir()
    files, counts, tally = {}, {}, _Tally(TALLY_KEYS[kind])
    for name, rows in _row_sources(kind, filters).items():
        relative = f"data/{name}.{fmt}"
        stream = tally.watch(rows()) if name in ("default", "standard") else rows()
        report = (lambda n, name=name: progress(name, n)) if progress else None
        if fmt == "jsonl":
            counts[name] = write_jsonl(stream, out_dir / relative, report)
        else:
            counts[name] = write_parquet(stream, out_dir / relative, SCHEMAS[kind][name], report)
        files[name] = relative
    tallies = tally.tallies()
    rules = pair_rules(kinds.pair_config(filters), filters.min_agreement) if kind in ("preferences", "ranked") else []
    write_card(out_dir, kind, files, counts, tallies, filters.to_json(), rules)
    with session_scope() as session:
        session.add(ExportRecord(kind=kind, format=fmt, out_dir=str(out_dir), filters=filters.to_json(),
                                 counts=counts))
    return ExportResult(kind, fmt, out_dir, files, counts, tallies)
