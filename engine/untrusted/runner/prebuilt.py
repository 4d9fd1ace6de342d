"""load_inline extensions the prebuild built the fast way, found again when the candidate loads.

torch's load_inline runs ninja before it imports an extension; ninja knows nothing of a library it did
not build and would build it again (a minute, on the GPU's time). So the prebuild leaves a stamp beside
each library it built: a digest of everything torch's build reads (its ninja file, main.cpp, cuda.cu;
the folder's own path left out, so a folder shown elsewhere still matches). In the runner, `install`
makes torch skip ninja where the stamp matches what torch has just written, and run it where it does
not. The stamp decides nothing about trust: the runner is the candidate's own process either way.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

STAMP = "prebuilt.json"
_LIBRARY = re.compile(r"^build (\S+): link ", re.M)


def inputs_digest(folder: Path, written_at: str | None = None) -> str:
    """A digest of torch's build inputs in `folder`, with the folder's path written as `{folder}`.

    `written_at` is the path torch wrote the files at, where that is not where they are read now (a
    sandbox's view of the same folder, read from outside it).
    """
    folder = Path(folder)
    digest = hashlib.sha256()
    for name in ("build.ninja", "main.cpp", "cuda.cu"):
        path = folder / name
        text = path.read_text() if path.exists() else ""
        text = text.replace(written_at or str(folder), "{folder}")
        digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()


def library_of(folder: Path) -> Path | None:
    """The library torch's build file in `folder` links."""
    try:
        match = _LIBRARY.search((Path(folder) / "build.ninja").read_text())
    except OSError:
        return None
    return Path(folder) / match.group(1).replace("$ ", " ") if match else None


def write_stamp(folder: Path, route: str, seconds: float) -> None:
    """Mark the library in `folder` as built from the inputs there now (by the fast build's `route`)."""
    stamp = Path(folder) / STAMP
    partial = stamp.with_suffix(".partial")
    partial.write_text(json.dumps({"inputs": inputs_digest(folder), "route": route, "seconds": round(seconds, 2)}))
    partial.replace(stamp)


def stamp_matches(folder: Path, written_at: str | None = None) -> bool:
    """The fast build made this folder's library from exactly the inputs torch has written there."""
    try:
        recorded = json.loads((Path(folder) / STAMP).read_text())
    except (OSError, ValueError):
        return False
    library = library_of(folder)
    return library is not None and library.exists() and recorded.get("inputs") == inputs_digest(folder, written_at)


def install() -> None:
    """Make torch's load_inline load a stamped library without running ninja."""
    from torch.utils import cpp_extension

    original = cpp_extension._run_ninja_build
    if getattr(original, "prebuilt_aware", False):
        return

    def run_ninja_build(build_directory: str, verbose: bool, error_prefix: str) -> None:
        if stamp_matches(Path(build_directory)):
            return
        original(build_directory, verbose, error_prefix)

    run_ninja_build.prebuilt_aware = True  # type: ignore[attr-defined]
    cpp_extension._run_ninja_build = run_ninja_build
