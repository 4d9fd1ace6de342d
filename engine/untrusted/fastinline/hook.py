"""The fast build inside torch's load_inline: torch writes its sources and ninja file as always, then
the fast build makes the library where ninja would have; where it cannot, torch's ninja build runs
instead and decides (its library, or its error). Installed only in the prebuild process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.untrusted.fastinline.extension import FastBuild, build_extension


@dataclass(frozen=True)
class BuildRecord:
    """One extension's build, for the log and the candidate's notes: `path` is fast | torch."""

    name: str
    path: str
    seconds: float
    route: str = ""
    shared_header: bool = False
    reason: str = ""  # why the fast build did not make it (torch's build then did, or failed)
    ok: bool = True


def install(pch_root: Path | None, on_record: Callable[[BuildRecord, FastBuild, Path], None]) -> None:
    """Replace torch's ninja step by the fast build, with torch's as the fallback."""
    from torch.utils import cpp_extension

    original = cpp_extension._run_ninja_build

    def run_ninja_build(build_directory: str, verbose: bool, error_prefix: str) -> None:
        folder = Path(build_directory)
        name = folder.name
        fast = build_extension(folder, pch_root)
        if fast.ok:
            on_record(BuildRecord(name, "fast", fast.seconds, fast.route, fast.shared_header), fast, folder)
            return
        if fast.authoritative:
            on_record(BuildRecord(name, "fast", fast.seconds, fast.route, fast.shared_header, fast.reason, False),
                      fast, folder)
            raise RuntimeError(f"{error_prefix}: {fast.log}")
        started = time.perf_counter()
        try:
            original(build_directory, verbose, error_prefix)
        except Exception:
            on_record(BuildRecord(name, "torch", time.perf_counter() - started, reason=fast.reason, ok=False),
                      fast, folder)
            raise
        on_record(BuildRecord(name, "torch", time.perf_counter() - started, reason=fast.reason), fast, folder)

    cpp_extension._run_ninja_build = run_ninja_build
