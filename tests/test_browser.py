"""The dashboard in a real browser: Debian's Chromium driven by Playwright against `streamlit run`.

Starts the app on loopback with a fresh REFINERY_HOME, opens every page, starts a run of the
library proposer on a C problem on the CPU, watches at least three rounds arrive without a page
reload, and opens the roofline. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path(os.environ.get("REFINERY_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CPU_PROBLEM = os.environ.get("REFINERY_BROWSER_PROBLEM", "stencil-2d")  # a C problem with CPU implementations
ROUND_SELECTOR = "[class*='st-key-round-']"
# Small timing budgets so that CPU rounds take seconds, not minutes, on a two-core CI machine.
FAST_RUN_ENV = {"REFINERY_TIMING_MIN_TRIALS": "3", "REFINERY_TIMING_MIN_SECONDS": "0.05",
                "REFINERY_TIMING_MAX_TRIALS": "5", "REFINERY_WORKER_TIMEOUT_S": "60"}

if not CHROMIUM.exists():
    pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium; .ci/run does)",
                allow_module_level=True)
if importlib.util.find_spec("playwright") is None:
    pytest.skip("playwright (the Python package) is not installed", allow_module_level=True)

from playwright.sync_api import Page, expect, sync_playwright  # noqa: E402


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
            return reply.read().decode().strip() == "ok"
    except OSError:
        return False


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`streamlit run app/main.py` on a free loopback port, with its own empty REFINERY_HOME."""
    home = tmp_path_factory.mktemp("browser-home")
    port = _free_port()
    env = {**os.environ, **FAST_RUN_ENV, "REFINERY_HOME": str(home)}
    env.pop("REFINERY_DATABASE_URL", None)
    log = (home / "streamlit.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app/main.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _healthy(url):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start: {(home / 'streamlit.log').read_text()[-2000:]}")
            time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    """Debian's Chromium with an empty profile; no browser download."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1500, "height": 1200})
        yield context.pages[0] if context.pages else context.new_page()
        context.close()


def wait_for_app(page: Page, timeout_ms: int = 60_000) -> None:
    """Connected, the script has run once, and no skeletons are left (Streamlit's own e2e checks)."""
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout_ms)
    page.wait_for_selector("[data-test-script-state='notRunning']", state="attached", timeout=timeout_ms)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout_ms)


def shot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"browser-{name}.png"
    page.wait_for_timeout(700)  # let charts finish their first draw
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.mark.parametrize(("path", "title"), [("", "Problems"), ("new_run", "New run"), ("runs", "Runs"),
                                             ("run_live", "Run (live)")])
def test_each_page_opens_in_the_browser(app_url: str, page: Page, path: str, title: str) -> None:
    page.goto(f"{app_url}/{path}")
    wait_for_app(page)
    expect(page.get_by_role("heading", name=title, exact=True)).to_be_visible()
    expect(page.get_by_test_id("stException")).to_have_count(0)
    shot(page, path or "problems")


def _choose(page: Page, label: str, option: str) -> None:
    box = page.get_by_test_id("stSelectbox").filter(has_text=label)
    box.click()
    page.get_by_role("option", name=option, exact=False).first.click()


@pytest.mark.timeout(900)
def test_a_library_run_streams_rounds_into_the_live_view_without_a_reload(app_url: str, page: Page) -> None:
    page.goto(f"{app_url}/new_run?problem={CPU_PROBLEM}")
    wait_for_app(page)
    _choose(page, "Device", "CPU only")
    rounds = page.get_by_label("Rounds", exact=True)
    rounds.fill("4")
    rounds.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Start run").click()
    expect(page.get_by_text("started.", exact=False)).to_be_visible(timeout=60_000)
    expect(page.get_by_text("run.log", exact=False)).to_be_visible()
    shot(page, "run-started")
    page.get_by_role("button", name="Open the live view").click()
    expect(page.get_by_role("heading", name="Run (live)", exact=True)).to_be_visible(timeout=30_000)

    page.evaluate("window.__refineryMarker = 'same document'")
    seen: list[int] = []
    deadline = time.monotonic() + 780
    while time.monotonic() < deadline:
        count = page.locator(ROUND_SELECTOR).count()
        if not seen or count != seen[-1]:
            seen.append(count)
        if count >= 3:
            break
        page.wait_for_timeout(500)
    assert page.locator(ROUND_SELECTOR).count() >= 3, f"rounds seen over time: {seen}"
    assert page.evaluate("window.__refineryMarker") == "same document", "the page was reloaded"
    assert len(set(seen)) >= 2, f"rounds did not stream in one by one: {seen}"
    shot(page, "run-live")

    page.get_by_role("tab", name="Roofline").click()
    roof = page.get_by_test_id("stVegaLiteChart").or_(page.get_by_text("No roofline yet", exact=False))
    expect(roof.first).to_be_visible(timeout=30_000)
    shot(page, "run-roofline")
    page.get_by_role("tab", name="Search tree").click()
    shot(page, "run-tree")
    page.get_by_role("tab", name="Diagnostics").click()
    expect(page.get_by_text("Static analysis", exact=False)).to_be_visible()
    shot(page, "run-diagnostics")

    page.goto(f"{app_url}/runs")
    wait_for_app(page)
    expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
    shot(page, "runs-after")
