"""A verifier with its own worker pool in a fresh REFINERY_HOME, for a test module's lifetime."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine.settings import get_settings
from engine.verify.evaluate import Verifier, VerifyOptions
from engine.verify.pool import PoolConfig, WorkerPool


@contextmanager
def verifier_in_fresh_home(home: Path, options: VerifyOptions, pool_timeout_s: float | None = None,
                           require_gpu: bool = False) -> Iterator[Verifier]:
    """Settings read from `home` (no database URL from the environment), the pool closed afterwards."""
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("REFINERY_HOME", str(home))
    monkeypatch.delenv("REFINERY_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    settings = get_settings()
    overrides = {"timeout_s": pool_timeout_s} if pool_timeout_s is not None else {}
    pool = WorkerPool(config=PoolConfig.from_settings(settings, **overrides))
    try:
        if require_gpu:
            assert pool.gpu, "the worker sees no GPU"
        yield Verifier(pool=pool, options=options, settings=settings)
    finally:
        pool.close()
        monkeypatch.undo()
        get_settings.cache_clear()


def gpu_verifier(tmp_path_factory, options: VerifyOptions, timeout_s: float = 600) -> Iterator[Verifier]:
    """A module's GPU verifier (for a fixture: `yield from gpu_verifier(...)`)."""
    with verifier_in_fresh_home(tmp_path_factory.mktemp("home"), options, pool_timeout_s=timeout_s,
                                require_gpu=True) as verifier:
        yield verifier
