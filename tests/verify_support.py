"""A verifier with its own worker pool in a fresh REFINERY_HOME, for a test module's lifetime."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine.schema.verdict import EvaluationResult
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


BUSY_MACHINE = "the clock cannot decide ("  # how `clock.Corroboration.detail` names a machine it saw disturbed
# (waits for a core, every core taken, its own loop moving or slower than its quietest, the runner's slow steps)


def timed_until_credited(evaluate: Callable[[], EvaluationResult], tries: int = 3) -> EvaluationResult:
    """`evaluate()` again (up to `tries` times) while the judge credits no speed. On a CPU machine shared with
    other test workers the judge often sees its clock disturbed and withholds the speed: its due, not a reject."""
    result = evaluate()
    for _ in range(tries - 1):
        if result.speedup is not None:
            break
        time.sleep(1.0)  # the other worker's load comes and goes
        result = evaluate()
    return result


def require_speed(result: EvaluationResult) -> None:
    """Fail unless a speed was credited; where the judge withheld it for a machine it saw busy (every try of
    `timed_until_credited`), say so as an expected failure instead: a busy machine is not what these tests test."""
    if result.speedup is not None:
        return
    reasons = [n for n in result.notes if "no speed credited" in n]
    if reasons and all(BUSY_MACHINE in n for n in reasons):
        pytest.xfail(f"the judge saw the machine busy and credited no speed: {reasons[0][:300]}")
    pytest.fail(f"no speed credited: {reasons or result.message}")
