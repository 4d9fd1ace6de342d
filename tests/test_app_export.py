"""The Export page previews what it will write, writes it, and offers the download."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.test_export import populated  # noqa: F401 - the fixture that fills the database

PAGE = str(Path(__file__).resolve().parents[1] / "app" / "views" / "export.py")


def test_export_page_with_no_data_says_there_is_nothing_yet(refinery_home):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("No rows match" in i.value for i in at.info)


@pytest.mark.usefixtures("populated")
def test_export_page_previews_exports_and_offers_the_zip(refinery_home, tmp_path):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.selectbox(key="export_kind").set_value("candidates").run()
    assert at.dataframe, "a preview table"
    at.text_input(key="export_out").set_value(str(tmp_path / "out")).run()
    at.button(key="export_go").click().run()
    assert not at.exception and not at.error
    assert (tmp_path / "out" / "README.md").is_file() and (tmp_path / "out" / "data" / "default.jsonl").is_file()
    assert any("5 rows" in m.value for m in at.markdown)


@pytest.mark.usefixtures("populated")
def test_each_export_gets_a_folder_named_by_its_kind_and_earlier_ones_stay_downloadable(refinery_home):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.selectbox(key="export_kind").set_value("candidates").run()
    at.selectbox(key="export_kind").set_value("preferences").run()  # the kind chosen last names the folder
    at.button(key="export_go").click().run()
    at.button(key="export_go").click().run()
    assert not at.exception and not at.error
    folders = sorted((refinery_home / "exports").iterdir())
    assert len(folders) == 2 and all(f.name.startswith("preferences-") for f in folders)
    assert all((f / "data" / "standard.jsonl").is_file() and (f / "README.md").is_file() for f in folders)
    listed = " ".join(m.value for m in at.markdown)
    assert all(str(f) in listed for f in folders)
    buttons = at.get("download_button")
    assert len(buttons) == 3  # the one just written, and both in the list of earlier exports


@pytest.mark.usefixtures("populated")
def test_earlier_exports_count_pairs_as_pairs_and_include_those_of_the_command_line(refinery_home):
    import json

    from typer.testing import CliRunner

    from engine.cli import app

    result = CliRunner().invoke(app, ["export", "preferences"])
    assert result.exit_code == 0, result.output
    [folder] = (refinery_home / "exports").iterdir()
    pairs = len((folder / "data" / "standard.jsonl").read_text().splitlines())
    assert pairs > 0 and pairs == len((folder / "data" / "conversational.jsonl").read_text().splitlines())
    assert f"exported {pairs:,} pairs" in result.output
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    [entry] = [m.value for m in at.markdown if str(folder) in m.value]
    assert f"{pairs:,} pairs (each in standard and conversational form)" in entry
    assert f"{2 * pairs:,} rows" not in entry
    assert json.loads((folder / "data" / "standard.jsonl").read_text().splitlines()[0])["prompt"]


def test_a_p_value_never_reads_as_zero() -> None:
    from app.components.style import fmt_p_value

    assert fmt_p_value(0.0) == "< 1e-16" and fmt_p_value(3e-40) == "< 1e-16"
    assert fmt_p_value(2.5e-7) == "2.50e-07" and fmt_p_value(0.0312) == "0.031" and fmt_p_value(None) == "–"


@pytest.mark.usefixtures("populated")
def test_the_preference_preview_shows_tiny_p_values_as_such(refinery_home):
    from engine.export import ExportFilters
    from engine.export.kinds import preference_rows

    written = [row["p_value"] for row in preference_rows(ExportFilters()) if row["p_value"] is not None]
    assert written and min(written) < 1e-16  # pairs measured far apart: the test is certain
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    at.selectbox(key="export_kind").set_value("preferences").run()
    [preview] = [df.value for df in at.dataframe if "p_value" in df.value.columns]
    shown = preview["p_value"].tolist()
    assert "< 1e-16" in shown and not any(str(v) in ("0", "0.0") for v in shown), shown
