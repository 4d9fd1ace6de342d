"""Event files: one small JSON file per stored event under the run's folder, for watchers.

The DB is the record; the file is only a doorbell written after the commit, named by the event's
id so rewriting it (after a crash between commit and file) is harmless.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from db.models import RunEvent


def event_path(folder: Path, event_id: int) -> Path:
    return folder / f"{event_id:08d}.json"


def publish(folder: Path, event: RunEvent) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = event_path(folder, event.id)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({
        "id": event.id, "kind": event.kind, "step": event.step, "candidate_id": event.candidate_id,
        "message": event.message, "time": event.created_at.isoformat(),
    }))
    os.replace(temporary, path)  # atomic: a watcher never reads half a file
    return path


def republish_missing(folder: Path, stored: list[RunEvent]) -> int:
    """Write files for events committed before a crash took the process down; returns how many."""
    missing = [e for e in stored if not event_path(folder, e.id).exists()]
    for event in missing:
        publish(folder, event)
    return len(missing)
