"""Event files: one small JSON file per stored event under the run's folder, for watchers.

The DB is the record; the file is only a doorbell written after the commit, named by the event's
id so rewriting it (after a crash between commit and file) is harmless.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from db.models import RunEvent

EVENT_FILE = re.compile(r"^(\d{8})\.json$")  # the one spelling of an event file's name, written and read here


def event_path(folder: Path, event_id: int) -> Path:
    return folder / f"{event_id:08d}.json"


def event_id_of(path: str | os.PathLike) -> int | None:
    """The event id an event file is named by, or None for anything else (temporary files, folders)."""
    match = EVENT_FILE.match(Path(path).name)
    return int(match.group(1)) if match else None


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
