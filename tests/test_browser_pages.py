"""Issue 38's page fixes seen in a real browser (Debian's Chromium driven by Playwright against `streamlit run`):
what AppTest cannot see, the page as drawn and laid out.

One server for the module, over a REFINERY_HOME seeded directly (runs and rounds written as a run process
stores them, a C program imported as the Problems page would), so the whole module takes about a minute:
the run picker says a run's status as it is now, a round's times fit their metrics and its code wraps, New
run leaves profiling off without a GPU, Problems keeps only the problems that run on the CPU, Settings lists
and saves settings, and New run refuses the library proposer on an imported problem before Start.
"""

from __future__ import annotations

import importlib.util
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.browser_support import CHROMIUM, chromium_page

pytestmark = pytest.mark.browser

C_PROGRAM = Path(__file__).parent / "fixtures" / "c_import" / "plain" / "scale_add.c"
LONG_LINE = "x = " + " + ".join(f"value_{i}" for i in range(80))  # far wider than a code pane

if not CHROMIUM.exists():
    pytest.skip(f"Chromium not found at {CHROMIUM} (apt-get install chromium; .ci/run does)",
                allow_module_level=True)
if importlib.util.find_spec("playwright") is None:
    pytest.skip("playwright (the Python package) is not installed", allow_module_level=True)

from playwright.sync_api import Page, expect  # noqa: E402

from app.testing import add_round, make_run, set_status, start_streamlit, stop_streamlit  # noqa: E402
from tests.conftest import gpu_present  # noqa: E402


@dataclass(frozen=True)
class App:
    url: str
    home: Path
    timed_run: int  # one round of a 1578 µs candidate whose source has a long line
    imported: str  # the slug of an imported C program: it ships only its baselines


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """`streamlit run` over a home this process seeds and keeps writing to (the same SQLite file)."""
    from db.session import reset_engines, use_database
    from engine.problem_import import import_path
    from engine.settings import get_settings
    from engine.store.database import use_settings_database

    home = tmp_path_factory.mktemp("browser-pages-home")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("REFINERY_HOME", str(home))
        env.delenv("REFINERY_DATABASE_URL", raising=False)
        get_settings.cache_clear()
        reset_engines()
        use_settings_database()
        (home / "settings.toml").write_text("# the team's file\nncu_in_runs = true\n")
        timed_run = make_run(status="finished", rounds=1)
        add_round(timed_run, 0, speedup=100 / 1578.0, source=f"import torch\n{LONG_LINE}\n")
        (problem,) = import_path(C_PROGRAM).imported
        server, url = start_streamlit(home, log=home.parent / "streamlit.log")
        try:
            yield App(url, home, timed_run, problem.slug)
        finally:
            stop_streamlit(server)
            reset_engines()
            use_database(None)
            get_settings.cache_clear()


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Page]:
    with chromium_page(tmp_path_factory.mktemp("chromium-profile")) as page:
        yield page


def open_page(page: Page, url: str, timeout_ms: int = 60_000) -> None:
    """Loaded, connected, the script has run once, and no skeletons are left (Streamlit's own e2e checks)."""
    page.goto(url)
    page.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']", timeout=timeout_ms)
    page.wait_for_selector("[data-test-script-state='notRunning']", state="attached", timeout=timeout_ms)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=timeout_ms)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def by_key(page: Page, key: str):
    """The element Streamlit drew for widget `key` (it carries the class st-key-<key>)."""
    return page.locator(f".st-key-{key}")


def _choose(page: Page, key: str, option: str) -> None:
    by_key(page, key).get_by_role("combobox").click()
    page.get_by_role("option", name=option, exact=True).click()


def _picker_options(page: Page) -> list[str]:
    """The run picker's labels as the open list draws them."""
    by_key(page, "live_run_pick").get_by_role("combobox").click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible()
    labels = [text.strip() for text in options.all_inner_texts()]
    page.keyboard.press("Escape")
    return labels


def _wait_for_label(page: Page, run_id: int, status: str, timeout_ms: int) -> list[str]:
    """Polls the open picker (no reload) until run `run_id` is labelled with `status`; the labels last seen."""
    labels: list[str] = []
    for _ in range(max(1, timeout_ms // 1000)):
        labels = _picker_options(page)
        if any(label.startswith(f"#{run_id} ") and label.endswith(f"· {status}") for label in labels):
            return labels
        page.wait_for_timeout(1000)
    raise AssertionError(f"run #{run_id} never labelled {status!r} in the picker: {labels}")


@pytest.mark.timeout(300)
def test_the_run_picker_says_a_run_has_ended_on_the_open_page(app: App, page: Page) -> None:
    """A run that ends elsewhere is labelled with its new status on an open run page, without a reload (the
    picker used to keep the cached 'running')."""
    shown = make_run(status="stopped")  # a terminal run on screen: nothing of its own draws the page again
    other = make_run(status="running")
    open_page(page, f"{app.url}/run_live?run={shown}")
    expect(by_key(page, "live_run_pick").get_by_role("combobox")).to_have_value(re.compile(rf"^#{shown} .*· stopped$"))
    _wait_for_label(page, other, "running", timeout_ms=15_000)
    page.evaluate("window.__refineryMarker = 'same document'")
    set_status(other, "finished")
    labels = _wait_for_label(page, other, "finished", timeout_ms=25_000)
    assert not any(label.startswith(f"#{other} ") and "running" in label for label in labels), labels
    assert page.evaluate("window.__refineryMarker") == "same document", "the page was reloaded"


def _overflowing(locator) -> list[str]:
    """Elements under `locator` (itself included) whose content is wider than their box: cut or scrolled."""
    return locator.evaluate("""root => [root, ...root.querySelectorAll('*')]
        .filter(e => e.scrollWidth > e.clientWidth + 1)
        .map(e => `${e.tagName}: ${e.scrollWidth} > ${e.clientWidth} (${e.textContent.slice(0, 40)})`)""")


@pytest.fixture
def laptop(page: Page) -> Iterator[Page]:
    """A laptop's window, 1280 pixels wide: where a round's four metrics in one row cut '1578.0 µs'."""
    size = page.viewport_size
    page.set_viewport_size({"width": 1280, "height": 1000})
    yield page
    if size:
        page.set_viewport_size(size)


def test_a_rounds_times_show_whole_and_its_code_wraps_in_the_pane(app: App, laptop: Page) -> None:
    page = laptop
    open_page(page, f"{app.url}/run_live?run={app.timed_run}")
    expect(page.locator("[class*='st-key-round-']").first).to_be_visible()

    def metric(label: str):
        return page.get_by_test_id("stMetric").filter(
            has=page.get_by_test_id("stMetricLabel").get_by_text(label, exact=True))

    for label, value in (("Candidate", "1.58 ms"), ("Baseline", "100 µs")):
        shown = metric(label).get_by_test_id("stMetricValue")
        expect(shown).to_have_count(1)
        assert _overflowing(shown) == [], (label, _overflowing(shown))  # drawn whole, not cut to an ellipsis
        assert shown.inner_text().strip() == value, (label, shown.inner_text())

    pane = page.locator(".kr-code").filter(has_text="value_79").first  # the Code tab, open by default
    expect(pane).to_be_visible()
    assert _overflowing(pane) == [], _overflowing(pane)  # the long line wraps: nothing to scroll sideways
    box, last = pane.bounding_box(), pane.get_by_text("value_79", exact=False).last.bounding_box()
    assert box and last and last["x"] + last["width"] <= box["x"] + box["width"], (box, last)


def _profile_box(page: Page):
    return by_key(page, "nr_profile").get_by_role("checkbox")


def test_new_run_leaves_profiling_unticked_and_disabled_without_a_gpu(app: App, page: Page) -> None:
    """settings.toml asks for profiling (ncu_in_runs = true): a run on the CPU must not keep it ticked."""
    open_page(page, f"{app.url}/new_run?problem=transpose")
    if not gpu_present():  # the device left at auto on this machine is the CPU
        expect(_profile_box(page)).to_be_disabled()
        expect(_profile_box(page)).not_to_be_checked()
    _choose(page, "nr_device", "CPU only")
    expect(_profile_box(page)).to_be_disabled()
    expect(_profile_box(page)).not_to_be_checked()


def _grid(within):
    """A dataframe's grid as it tells assistive technology (a table kept out of sight, so CSS finds it, not
    roles): its rows (`aria-rowcount`, the header row included) and the cells of the rows in view."""
    return within.locator("table[role='grid']")


def test_the_problems_filter_keeps_only_the_problems_that_run_on_the_cpu(app: App, page: Page) -> None:
    from engine.problems import scan_all

    problems = scan_all().problems
    on_cpu = {p.slug for p in problems if p.runs_on_cpu}
    assert 0 < len(on_cpu) < len(problems) and app.imported in on_cpu
    open_page(page, app.url)
    table = _grid(by_key(page, "problems_table"))
    expect(table).to_have_attribute("aria-rowcount", str(len(problems) + 1))
    by_key(page, "pf_cpu").locator("label").first.click()  # the switch itself lies under its label
    expect(page.get_by_text(f"{len(on_cpu)} of {len(problems)} problems", exact=True)).to_be_visible()
    expect(table).to_have_attribute("aria-rowcount", str(len(on_cpu) + 1))
    slugs = set(table.locator("td[aria-colindex='1']").all_inner_texts())
    assert slugs and slugs <= on_cpu, slugs - on_cpu


def _cell(text: str) -> str:
    return f"td[role='gridcell']:text-is('{text}')"


def _setting_row(page: Page, name: str):
    return _grid(page.get_by_test_id("stDataFrame")).locator("tr").filter(has=page.locator(_cell(name)))


def test_the_settings_page_lists_the_settings_and_saves_one_into_settings_toml(app: App, page: Page) -> None:
    from engine.settings import Settings

    open_page(page, f"{app.url}/settings")
    expect(page.get_by_role("heading", name="Settings", exact=True)).to_be_visible()
    table = _grid(page.get_by_test_id("stDataFrame"))
    expect(table).to_have_attribute("aria-rowcount", str(len(Settings.model_fields) + 1))
    expect(_setting_row(page, "llm_model").locator(_cell("default"))).to_have_count(1)
    _choose(page, "settings_name", "llm_model")
    by_key(page, "settings_value").locator("input").fill("gpt-4o-mini")
    page.get_by_role("button", name="Save to settings.toml").click()
    expect(page.get_by_test_id("stAlertContentSuccess")).to_contain_text("Saved: llm_model = gpt-4o-mini")
    row = _setting_row(page, "llm_model")
    for cell in ("gpt-4o-mini", "settings.toml"):  # the table shows the value now in force, and where it is from
        expect(row.locator(_cell(cell))).to_have_count(1)
    text = (app.home / "settings.toml").read_text()
    assert text.startswith("# the team's file"), text  # the file's own lines are kept
    assert tomllib.loads(text) == {"ncu_in_runs": True, "llm_model": "gpt-4o-mini"}


def test_new_run_refuses_the_library_proposer_on_an_imported_problem_before_start(app: App, page: Page) -> None:
    from db import runs_repo

    runs_before = len(runs_repo.list_runs())
    open_page(page, f"{app.url}/new_run?problem={app.imported}")
    refusal = page.get_by_test_id("stAlertContentWarning").filter(
        has_text=f"has nothing to propose for {app.imported}")
    expect(refusal).to_be_visible()
    by_key(page, "nr_start").get_by_role("button").click()
    expect(page.get_by_test_id("stAlertContentError").filter(has_text="has nothing to propose")).to_be_visible()
    assert len(runs_repo.list_runs()) == runs_before  # refused before a run was stored
    by_key(page, "nr_use_llm").get_by_role("button", name="Use the LLM proposer").click()
    expect(by_key(page, "nr_base_url").locator("input")).to_be_visible()
    expect(refusal).to_have_count(0)
