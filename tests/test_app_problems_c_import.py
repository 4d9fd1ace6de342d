"""The Problems page imports C programs as the CLI does: a .c file or folder by path, with the lengths and
headers a program does not say typed in, and uploads of a .c file with its headers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from app.components.problems_view import save_uploads
from app.testing import app_at
from engine.problems.cimport.rounding import has_fma

PAGE = "views/problems.py"
FIXTURES = Path(__file__).parent / "fixtures" / "c_import"
RESIDUAL = Path(__file__).parent / "fixtures" / "c_rounding" / "sensitive" / "residual.c"


def _import(at, path: Path):
    at.text_input(key="import_path").set_value(str(path))
    at.button[[b.label for b in at.button].index("Import")].click().run()
    return at


def test_importing_a_c_program_by_path_shows_its_configurations(refinery_home) -> None:
    at = _import(app_at(PAGE), FIXTURES / "plain" / "scale_add.c")
    assert not at.exception
    assert any("c-scale-add" in s.value and "3 configurations, 1 hidden" in s.value for s in at.success)
    assert (refinery_home / "problems" / "c" / "c-scale-add" / "impls" / "naive.cu").is_file()


def test_a_length_the_program_does_not_say_is_asked_for_and_can_be_typed_in(refinery_home) -> None:
    at = _import(app_at(PAGE), FIXTURES / "opaque" / "square.c")
    assert any("argument 'v' of square" in e.value for e in at.error)
    at.text_input(key="import_c_sizes").set_value("v=n")
    at = _import(at, FIXTURES / "opaque" / "square.c")
    assert any("c-square" in s.value for s in at.success), [e.value for e in at.error]


@pytest.mark.skipif(not has_fma(), reason="the program's rounding is a fused multiply-add's; this CPU has none")
def test_what_an_import_noticed_shows_after_it_and_on_the_problems_card(refinery_home) -> None:
    at = _import(app_at(PAGE), RESIDUAL)
    assert not at.exception
    assert any("c-residual" in s.value for s in at.success)
    rounding = [w.value for w in at.warning if "the program's own results change with rounding" in w.value]
    assert len(rounding) == 1 and "gives other r on configuration 'small'" in rounding[0]
    noticed = next(e for e in at.expander if e.label.startswith("What the import noticed"))
    assert any("p is written by residual but main never prints it" in m.value for m in noticed.markdown)
    at.run()  # another rerun (a filter, a click elsewhere): the report stays until the next import
    assert any("change with rounding" in w.value for w in at.warning)
    slugs = list(at.dataframe(key="problems_table").value["slug"])
    at.session_state["problems_table"] = {"selection": {"rows": [slugs.index("c-residual")], "columns": [],
                                                        "cells": []}}
    at.run()
    assert any("Slug `c-residual`" in c.value for c in at.caption)
    assert sum("change with rounding" in w.value for w in at.warning) == 2  # the card's and the report's
    assert sum(e.label.startswith("What the import noticed") for e in at.expander) == 2


@dataclass
class _Upload:
    name: str
    data: bytes

    def getvalue(self) -> bytes:
        return self.data


def test_uploads_of_one_file_import_it_and_of_several_import_their_folder(tmp_path) -> None:
    one = save_uploads([_Upload("scale_add.c", b"int main(void) { return 0; }")], tmp_path / "a")
    assert one == tmp_path / "a" / "scale_add.c" and one.is_file()
    folder = save_uploads([_Upload("smooth.c", b"x"), _Upload("smooth.h", b"y")], tmp_path / "b")
    assert folder == tmp_path / "b" and sorted(p.name for p in folder.iterdir()) == ["smooth.c", "smooth.h"]
