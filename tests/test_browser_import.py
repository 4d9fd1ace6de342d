"""The Problems page's upload in a real browser: a program whose header was not uploaded is told to upload it
(the form has no folder to name), and the uploader is empty after an import, so the next one brings only the
files chosen then."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser_support import CHROMIUM, chromium_page

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).parent / "fixtures" / "c_import"

if not CHROMIUM.exists():
    pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium; .ci/run does)",
                allow_module_level=True)
if importlib.util.find_spec("playwright") is None:
    pytest.skip("playwright (the Python package) is not installed", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

from app.testing import start_streamlit, stop_streamlit  # noqa: E402


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("browser-import-home")
    server, url = start_streamlit(home, log=home.parent / "streamlit.log")
    try:
        yield url
    finally:
        stop_streamlit(server)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    with chromium_page(tmp_path_factory.mktemp("chromium-profile")) as page:
        yield page


UPLOADER = "[class*='st-key-import_upload']"  # the uploader, whatever round of it is drawn


def _upload(page: Page, *files: Path) -> None:
    page.locator(UPLOADER).locator("input[type='file']").set_input_files([str(f) for f in files])
    expect(page.locator(UPLOADER).get_by_test_id("stFileChip")).to_have_count(len(files), timeout=20_000)
    page.get_by_role("button", name="Upload and import").click()


@pytest.mark.timeout(600)
def test_an_upload_missing_its_header_says_upload_it_and_the_next_upload_brings_only_its_own_files(
        app_url: str, page: Page) -> None:
    page.goto(app_url)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=60_000)
    page.get_by_role("tab", name="Import").click()
    _upload(page, FIXTURES / "twofile" / "main.c")
    error = page.get_by_test_id("stAlertContentError").filter(has_text="main.c")
    expect(error).to_contain_text("upload the header too", timeout=180_000)
    expect(error).not_to_contain_text("--include")
    expect(page.locator(UPLOADER).get_by_test_id("stFileChip")).to_have_count(0)  # emptied after the import

    _upload(page, FIXTURES / "plain" / "scale_add.c")
    expect(page.get_by_test_id("stAlertContentSuccess").filter(has_text="c-scale-add")).to_be_visible(
        timeout=300_000)
    expect(page.get_by_test_id("stAlertContentError")).to_have_count(0)  # main.c was not imported again
