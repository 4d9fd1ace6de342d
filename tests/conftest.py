"""Shared fixtures: an isolated REFINERY_HOME per test, and markers that skip where the machine lacks
what a test needs (a GPU, the PostgreSQL server .ci/run starts) with the reason printed."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest


@functools.cache
def gpu_present() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001 - any failure to see a GPU means "no GPU" here
        return False


def pytest_collection_modifyitems(config, items) -> None:
    skip_gpu = pytest.mark.skip(reason="needs an NVIDIA GPU (run on the device machine)")
    skip_pg = pytest.mark.skip(reason="REFINERY_TEST_POSTGRES_URL not set (./run.sh test starts a server)")
    for item in items:
        if "gpu" in item.keywords and not gpu_present():
            item.add_marker(skip_gpu)
        if "postgres" in item.keywords and not os.environ.get("REFINERY_TEST_POSTGRES_URL"):
            item.add_marker(skip_pg)


def pytest_runtest_logreport(report) -> None:
    """With REFINERY_REPORT_FAILURES_AT_ONCE=1, a failure's traceback prints as it happens.

    Device calls run under a hard deadline; pytest's own failure section comes only at the end of
    the session, so a run cut short would otherwise say that a test failed but never why.
    """
    if report.failed and os.environ.get("REFINERY_REPORT_FAILURES_AT_ONCE") == "1":
        print(f"\n--- {report.nodeid} ({report.when}) ---\n{report.longreprtext[-4000:]}\n", flush=True)


@pytest.fixture
def refinery_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh data folder and SQLite database for one test (named as the process's database)."""
    from db.session import reset_engines, use_database
    from engine.settings import get_settings
    from engine.store.database import use_settings_database

    home = tmp_path / "home"
    monkeypatch.setenv("REFINERY_HOME", str(home))
    monkeypatch.delenv("REFINERY_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    reset_engines()
    use_settings_database()
    yield home
    reset_engines()
    use_database(None)
    get_settings.cache_clear()


@pytest.fixture
def postgres_url() -> str:
    url = os.environ.get("REFINERY_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("REFINERY_TEST_POSTGRES_URL not set (./run.sh test starts a server)")
    return url
