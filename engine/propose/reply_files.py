"""Replies as they stream, written where a watcher can read them: one file per (step, sample, kind) in the
run folder's `stream/`, rewritten at most a few times a second. The database gets the whole reply once
it is complete; these files are only the view of it forming (the live page and the CLI read them)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from engine.propose.stream import OnDelta

WRITE_EVERY_S = 0.25


def reply_file(folder: Path, step: int, sample: int, kind: str) -> Path:
    return folder / f"{step:05d}.{sample:03d}.{kind}.txt"


class ReplyStreams:
    def __init__(self, folder: Path, step: int) -> None:
        self.folder, self.step = folder, step
        folder.mkdir(parents=True, exist_ok=True)

    def listener(self, sample: int, say: Callable[[str], None] | None = None) -> OnDelta:
        """An `on_delta` for one sample: writes the growing text atomically, and says how much has come."""
        written: dict[str, float] = {}

        def on_delta(kind: str, text: str) -> None:
            now = time.monotonic()
            if now - written.get(kind, 0.0) < WRITE_EVERY_S:
                return
            written[kind] = now
            _write(reply_file(self.folder, self.step, sample, kind), text)
            if say is not None:
                say(f"step {self.step}: sample {sample}: receiving the {kind} ({len(text):,} characters)")

        return on_delta

    def complete(self, sample: int, answer: str | None, reasoning: str | None) -> None:
        """The whole reply, once it has come (the last deltas may have fallen between two writes)."""
        for kind, text in (("answer", answer), ("reasoning", reasoning)):
            if text:
                _write(reply_file(self.folder, self.step, sample, kind), text)


def _write(path: Path, text: str) -> None:
    partial = path.with_suffix(".part")
    partial.write_text(text)
    os.replace(partial, path)  # a reader never sees half a write


def latest_replies(folder: Path) -> dict[tuple[int, int, str], str]:
    """What has streamed so far, by (step, sample, kind)."""
    found = {}
    for path in sorted(folder.glob("*.txt")) if folder.is_dir() else []:
        step, sample, kind = path.name.split(".")[:3]
        found[(int(step), int(sample), kind)] = path.read_text()
    return found
