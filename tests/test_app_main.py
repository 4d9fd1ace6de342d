"""The entry point: it opens on a fresh database, routes to every page, and says "no GPU" once."""

from __future__ import annotations

import pytest

from app import main
from app.testing import app_at

REFINE_PAGES = ("views/problems.py", "views/new_run.py", "views/run_live.py", "views/runs.py")


def test_app_opens_on_problems_with_a_fresh_empty_database(refinery_home) -> None:
    at = app_at()
    assert not at.exception
    assert [t.value for t in at.title] == ["Problems"]
    assert (refinery_home / "refinery.db").exists()


@pytest.mark.parametrize("page", REFINE_PAGES)
def test_every_page_loads_without_an_error(refinery_home, page: str) -> None:
    at = app_at(page)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]


def test_navigation_lists_data_pages_only_when_their_scripts_exist(tmp_path) -> None:
    pages_dir = tmp_path / "pages"
    pages_dir.mkdir()
    for name in ("problems.py", "new_run.py", "run_live.py", "runs.py", "export.py"):
        (pages_dir / name).write_text("")
    sections = main.page_specs(pages_dir)
    assert [title for _, title, _ in sections["Refine"]] == ["Problems", "New run", "Run (live)", "Runs"]
    assert [title for _, title, _ in sections["Data"]] == ["Export"]
    (pages_dir / "export.py").unlink()
    assert "Data" not in main.page_specs(pages_dir)


def test_without_a_gpu_the_app_says_so_once(refinery_home, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    from app.components import engine_api
    from app.testing import MAIN, clear_streamlit_caches

    monkeypatch.setattr(engine_api, "driver_present", lambda: False)
    clear_streamlit_caches()
    at = AppTest.from_file(str(MAIN), default_timeout=60)
    at.run()
    assert sum("No GPU on this machine" in i.value for i in at.info) == 1
    at.run()
    assert not any("No GPU on this machine" in i.value for i in at.info)


def test_a_database_that_cannot_be_opened_is_said_in_words(refinery_home, monkeypatch) -> None:
    monkeypatch.setenv("REFINERY_DATABASE_URL", "postgresql://nobody@127.0.0.1:1/none")
    from engine.settings import get_settings

    get_settings.cache_clear()
    at = app_at()
    assert not at.exception
    assert any("Could not open the database" in e.value for e in at.error)
