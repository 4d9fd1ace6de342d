"""The Export page previews what it will write, writes it, and offers the download."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.test_export import populated  # noqa: F401 - the fixture that fills the database

PAGE = str(Path(__file__).resolve().parents[1] / "app" / "pages" / "export.py")


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
