"""Where an export is written: a folder of its own, named by kind and UTC time, created here so that two
exports can never share one (a second export in the same second gets a numbered suffix)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path


class FolderInUse(ValueError):
    """The folder asked for already holds files: writing there would mix two exports."""


def exports_root() -> Path:
    from engine.settings import get_settings

    return get_settings().home / "exports"


def new_export_folder(kind: str, root: Path | None = None, now: datetime | None = None) -> Path:
    root = root or exports_root()
    root.mkdir(parents=True, exist_ok=True)
    stem = f"{kind}-{(now or datetime.now(UTC)).strftime('%Y%m%d-%H%M%S')}"
    for attempt in range(1000):
        folder = root / (stem if attempt == 0 else f"{stem}-{attempt + 1}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise FolderInUse(f"no free export folder named {stem}-N under {root}")


def claim_folder(folder: Path) -> Path:
    """A folder the user named: created if missing, refused if it holds anything."""
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise FolderInUse(f"{folder} already holds files: an export goes into a new or empty folder "
                          "(leave the folder out to get a new one under the data folder)")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
