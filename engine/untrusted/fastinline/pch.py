"""The shared precompiled header: `torch/extension.h` parsed once per compiler and flag set, then loaded
by every candidate's host compile (`-include <folder>/torch_extension.h`, where gcc finds the `.gch`).

A folder per key (a hash of the compiler, its version and the flags without the extension's name,
which torch's headers never read), under a cache root that builds see read-only: only
`engine.untrusted.fastinline.pch_job`, which runs no candidate code, writes one. gcc checks a header it is
handed against the compile's own flags and ignores it (`-Winvalid-pch` says so) where they differ, so a
stale or mismatched header costs time, never correctness.
"""

from __future__ import annotations

import functools
import hashlib
import subprocess
from collections.abc import Sequence
from pathlib import Path

HEADER = "torch_extension.h"
HEADER_TEXT = "#include <torch/extension.h>\n"
IGNORED_MARK = "not used because"  # gcc's -Winvalid-pch wording for a header it would not load


@functools.cache
def compiler_identity(cxx: tuple[str, ...]) -> str:
    """The compiler's full version and target: a new compiler means a new header."""
    try:
        done = subprocess.run([*cxx, "-dumpfullversion", "-dumpmachine"], capture_output=True, text=True, timeout=30)
        return done.stdout.strip().replace("\n", " ")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def pch_key(cxx: Sequence[str], flags: Sequence[str]) -> str:
    """The folder name of the header for these flags (main.cpp's flags without TORCH_EXTENSION_NAME)."""
    digest = hashlib.sha256()
    for part in (" ".join(cxx), compiler_identity(tuple(cxx)), HEADER_TEXT, *flags):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def find_header(root: Path | None, cxx: Sequence[str], flags: Sequence[str]) -> Path | None:
    """The header to `-include` for these flags, where its precompiled form has been built."""
    if root is None:
        return None
    header = Path(root) / pch_key(cxx, flags) / HEADER
    return header if header.exists() and header.with_name(HEADER + ".gch").exists() else None


def header_command(cxx: Sequence[str], flags: Sequence[str], header: Path) -> list[str]:
    """The compile that makes `<header>.gch`."""
    return [*cxx, *flags, "-x", "c++-header", str(header), "-o", f"{header}.gch"]


def used(log: str) -> bool:
    """False where gcc said it ignored the header (flags differ from the ones it was built with)."""
    return IGNORED_MARK not in log
