"""Helpers shared by the analysis and feedback tests: the fixture kernels and one build cache per
test process (so each fixture compiles once however many tests read it)."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "kernels"


@functools.cache
def cache_dir() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="refinery-analysis-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def fixture_source(name: str) -> str:
    return (FIXTURES / name).read_text()


@functools.cache
def analyse_fixture(name: str, block: tuple[int, int, int] | None = None):
    """The static report of a fixture kernel with no problem attached (sizes default to 4096)."""
    from engine.analysis import analyse_candidate

    language = "python" if name.endswith(".py") else "cuda"
    return analyse_candidate(None, fixture_source(name), language, arch="sm_90", cache_dir=cache_dir(), block=block)
