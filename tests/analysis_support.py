"""Helpers shared by the analysis and feedback tests: the fixture kernels and one build cache.

Builds are keyed by the hash of source, flags and compiler, so the cache is kept between runs
under pytest's own cache folder (`.pytest_cache/`, ignored by git; REFINERY_TEST_BUILD_CACHE
overrides it): a re-run costs no nvcc time, a fresh checkout compiles each kernel once.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures" / "kernels"


@functools.cache
def cache_dir() -> Path:
    folder = Path(os.environ.get("REFINERY_TEST_BUILD_CACHE")
                  or Path(__file__).resolve().parents[1] / ".pytest_cache" / "d" / "refinery-builds")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def fixture_source(name: str) -> str:
    return (FIXTURES / name).read_text()


@functools.cache
def analyse_fixture(name: str, block: tuple[int, int, int] | None = None):
    """The static report of a fixture kernel with no problem attached (sizes default to 4096)."""
    from engine.analysis import analyse_candidate

    language = "python" if name.endswith(".py") else "cuda"
    return analyse_candidate(None, fixture_source(name), language, arch="sm_90", cache_dir=cache_dir(), block=block)
