"""One export: stream the kind's rows through a writer, count what passed, write the card, record it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from db.models import ExportRecord
from db.session import session_scope
from engine.export import kinds
from engine.export.card import write_card
from engine.export.filters import ExportFilters
from engine.export.schemas import SCHEMAS
from engine.export.writers import write_jsonl, write_parquet

FORMATS = ("jsonl", "parquet")


@dataclass
class ExportResult:
    kind: str
    format: str
    out_dir: Path
    files: dict[str, str]
    counts: dict[str, int]
    summary: dict = field(default_factory=dict)


class _Tally:
    """Counts sources, devices and problems of the rows as they stream past, for the card."""

    def __init__(self) -> None:
        self.counters: dict[str, Counter] = {"problem": Counter(), "source": Counter(), "device": Counter(),
                                             "origin": Counter()}

    def watch(self, rows: Iterable[dict]) -> Iterator[dict]:
        for row in rows:
            for key, counter in self.counters.items():
                if row.get(key) is not None:
                    counter[row[key]] += 1
            yield row

    def summary(self) -> dict:
        return {f"{key}s": dict(counter.most_common(20)) for key, counter in self.counters.items() if counter}


def _row_sources(kind: str, filters: ExportFilters) -> dict[str, Callable[[], Iterator[dict]]]:
    if kind == "preferences":
        return {"standard": lambda: kinds.preference_rows(filters),
                "conversational": lambda: kinds.preference_rows(filters, conversational=True)}
    producer = {"candidates": kinds.candidate_rows, "ranked": kinds.ranked_rows,
                "trajectories": kinds.trajectory_rows}[kind]
    return {"default": lambda: producer(filters)}


def export_dataset(kind: str, fmt: str, out_dir: Path, filters: ExportFilters | None = None,
                   progress: Callable[[str, int], None] | None = None) -> ExportResult:
    if kind not in SCHEMAS:
        raise ValueError(f"unknown export kind {kind!r}; one of {', '.join(SCHEMAS)}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use jsonl or parquet")
    filters = filters or ExportFilters()
    out_dir = Path(out_dir)
    (out_dir / "data").mkdir(parents=True, exist_ok=True)
    files, counts, tally = {}, {}, _Tally()
    for name, rows in _row_sources(kind, filters).items():
        relative = f"data/{name}.{fmt}"
        stream = tally.watch(rows()) if name in ("default", "standard") else rows()
        report = (lambda n, name=name: progress(name, n)) if progress else None
        if fmt == "jsonl":
            counts[name] = write_jsonl(stream, out_dir / relative, report)
        else:
            counts[name] = write_parquet(stream, out_dir / relative, SCHEMAS[kind][name], report)
        files[name] = relative
    summary = tally.summary()
    write_card(out_dir, kind, files, counts, filters.to_json(), summary)
    with session_scope() as session:
        session.add(ExportRecord(kind=kind, format=fmt, out_dir=str(out_dir), filters=filters.to_json(),
                                 counts=counts))
    return ExportResult(kind, fmt, out_dir, files, counts, summary)
