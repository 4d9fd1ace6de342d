"""Flags and their reviews in a real browser (Debian's Chromium driven by Playwright against `streamlit run`):
the Flags page lists every open flag with its review buttons; a result a person rejects there never becomes
the best of its problem; clearing a flag on a round's panel shows at once (and after a reload), and the
cleared result counts for the best at once.

One run of the transpose problem is stored before the app starts: an honest result at 2×, and three flagged
ones no person has reviewed (40×, 30× and 25×, the last one the newest round). The tests run in file order
and each review they make stays for the next.
"""

from __future__ import annotations

import csv
import importlib.util
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser_support import CHROMIUM, chromium_page

pytestmark = pytest.mark.browser

REASON = "speedup over 10x: re-measured in a fresh runner"

if not CHROMIUM.exists():
    pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium; .ci/run does)",
                allow_module_level=True)
if importlib.util.find_spec("playwright") is None:
    pytest.skip("playwright (the Python package) is not installed", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

from app.testing import start_streamlit, stop_streamlit  # noqa: E402


def _seed(home: Path) -> dict[str, int]:
    """The run described in the module's words, stored in `home`'s database; candidate and evaluation ids."""
    from sqlmodel import select

    from app.testing import add_round, make_run, other_code
    from db.models import Evaluation
    from db.session import reset_engines, session_scope, use_database
    from engine.settings import get_settings
    from engine.store.database import use_settings_database

    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setenv("REFINERY_HOME", str(home))
    monkeypatch.delenv("REFINERY_DATABASE_URL", raising=False)
    get_settings.cache_clear()
    reset_engines()
    use_settings_database()
    try:
        run_id = make_run(status="finished", rounds=4)
        ids = {"run": run_id, "honest": add_round(run_id, 0, speedup=2.0, source=other_code(1))}
        for step, (name, speedup) in enumerate((("rejected", 40.0), ("awaiting", 30.0), ("cleared", 25.0)), 1):
            ids[name] = add_round(run_id, step, speedup=speedup, source=other_code(step + 1))
            with session_scope() as session:
                ev = session.exec(select(Evaluation).where(Evaluation.candidate_id == ids[name])).one()
                ev.flagged, ev.timing = True, {"flag_reason": REASON}
                session.add(ev)
                session.flush()
                ids[f"{name}_evaluation"] = ev.id
        return ids
    finally:
        reset_engines()
        use_database(None)
        monkeypatch.undo()
        get_settings.cache_clear()


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict[str, int]]]:
    """(the app's URL, the stored ids): `streamlit run` on loopback over the seeded REFINERY_HOME."""
    home = tmp_path_factory.mktemp("browser-flags-home")
    ids = _seed(home)
    server, url = start_streamlit(home, log=home.parent / "streamlit.log")
    try:
        yield url, ids
    finally:
        stop_streamlit(server)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    # Without the save-file picker (which would wait for a person) the grid's CSV comes as a download.
    with chromium_page(tmp_path_factory.mktemp("chromium-profile"), height=1400, downloads=True,
                       init_script="delete window.showSaveFilePicker") as page:
        yield page


def _open(page: Page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=60_000)
    page.wait_for_selector("[data-test-script-state='notRunning']", state="attached", timeout=60_000)


def _card(page: Page, evaluation_id: int):
    return page.locator(f".st-key-flag_{evaluation_id}")


def _review(page: Page, scope, evaluation_id: int, button: str) -> None:
    scope.locator(f".st-key-flag_reviewer_{evaluation_id} input").fill("ada")
    scope.get_by_role("button", name=button).click()


def _best_rows(page: Page) -> list[dict[str, str]]:
    """The Best per problem table's rows, as its own "Download as CSV" gives them (the grid draws its cells
    on a canvas, with no text to read)."""
    page.get_by_role("tab", name="Best per problem").click()
    table = page.locator(".st-key-best_table")
    expect(table).to_be_visible(timeout=30_000)
    table.hover()
    with page.expect_download(timeout=30_000) as download:
        table.get_by_role("button", name="Download as CSV").click()
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    return list(csv.DictReader(io.StringIO(text)))


def test_the_flags_page_lists_every_open_flag_with_its_review_buttons(stored, page: Page) -> None:
    url, ids = stored
    _open(page, f"{url}/flags")
    expect(page.get_by_role("heading", name="Flags", exact=True)).to_be_visible()
    for name, claimed in (("rejected", "40.00×"), ("awaiting", "30.00×"), ("cleared", "25.00×")):
        card = _card(page, ids[f"{name}_evaluation"])
        expect(card).to_contain_text(f"candidate #{ids[name]}")
        expect(card).to_contain_text(claimed)
        expect(card).to_contain_text(REASON)
        expect(card.get_by_role("button", name="Clear: the speedup is real")).to_be_visible()
        expect(card.get_by_role("button", name="Reject: not real")).to_be_visible()
    expect(page.locator("[class*='st-key-flag_']").filter(has_text="Speedup claimed")).to_have_count(3)
    expect(_card(page, ids["honest"])).to_have_count(0)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_a_result_rejected_on_the_flags_page_never_becomes_the_best_of_its_problem(stored, page: Page) -> None:
    url, ids = stored
    _open(page, f"{url}/flags")
    card = _card(page, ids["rejected_evaluation"])
    _review(page, card, ids["rejected_evaluation"], "Reject: not real")
    expect(card).to_have_count(0, timeout=30_000)  # gone from the open flags at once
    expect(_card(page, ids["awaiting_evaluation"])).to_be_visible()

    _open(page, f"{url}/runs")
    (row,) = _best_rows(page)
    assert row["candidate"] == str(ids["honest"]) and row["best speedup"] == "2.00×", row
    assert row["awaiting review"] == "2", row  # the 30x and 25x results still wait for a person
    expect(page.get_by_text("Some results are flagged and not yet reviewed")).to_be_visible()


def test_clearing_a_flag_on_the_rounds_panel_shows_at_once_and_counts_for_the_best(stored, page: Page) -> None:
    url, ids = stored
    _open(page, f"{url}/run_live?run={ids['run']}")  # the newest round, the 25x one, is shown
    evaluation = ids["cleared_evaluation"]
    expect(page.get_by_text("Flagged for review", exact=False)).to_be_visible(timeout=30_000)
    page.evaluate("window.__refineryMarker = 'same document'")
    _review(page, page, evaluation, "Clear: the speedup is real")
    expect(page.get_by_text("Flag cleared by ada", exact=False)).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Clear: the speedup is real")).to_have_count(0)
    assert page.evaluate("window.__refineryMarker") == "same document", "the page was reloaded"

    page.reload()
    page.wait_for_selector("[data-test-script-state='notRunning']", state="attached", timeout=60_000)
    expect(page.get_by_text("Flag cleared by ada", exact=False)).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Clear: the speedup is real")).to_have_count(0)

    _open(page, f"{url}/runs")
    (row,) = _best_rows(page)  # the cleared 25x result is the best now; the rejected 40x one never is
    assert row["candidate"] == str(ids["cleared"]) and row["best speedup"] == "25.00×", row
    assert row["awaiting review"] == "1", row

    _open(page, f"{url}/flags")  # one open flag left: the 30x result
    expect(_card(page, ids["awaiting_evaluation"])).to_be_visible()
    expect(_card(page, evaluation)).to_have_count(0)
