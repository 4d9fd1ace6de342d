"""Recorded runs: real GPU runs shipped under assets/recorded, so a machine with no GPU can label,
rank and export real measurements at once. Every loaded row is marked `recorded`.

A recording is JSONL, one run per line with its candidates, evaluations and diagnostics
(`db.recordings` makes and adds those records); ids are re-mapped on load, so recordings load into
any database next to its own runs. Rows keep the shape they were recorded in: their readers migrate
older shapes (`engine.schema`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from db.recordings import add_records, run_records
from engine.problems.library import ASSETS_DIR
from engine.reward.score import counted_reward

RECORDED_DIR = ASSETS_DIR / "recorded"


def save_recording(database_url: str, out: Path, run_ids: list[int] | None = None) -> int:
    """Write the runs of `database_url` (all, or `run_ids`) to a recording; returns how many."""
    count = 0
    with Path(out).open("w") as handle:
        for record in run_records(database_url, run_ids):
            handle.write(json.dumps(record) + "\n")
            count += 1
    return count


def _held_for_review(reward: float | None, components: dict | None) -> tuple[float | None, dict]:
    """A flagged result awaiting review: its speed term held (`engine.reward.score.counted_reward`)."""
    return counted_reward(reward, components, True, None)


def _records(folder: Path) -> Iterator[dict]:
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            yield json.loads(line)


def load_recorded(folder: Path | None = None) -> int:
    """Load every shipped recording not loaded yet (by problem and creation time); returns runs loaded.
    Recorded flagged results loaded earlier get their speed term held too."""
    return add_records(_records(Path(folder or RECORDED_DIR)), _held_for_review)
