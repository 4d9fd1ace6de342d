"""The Problems page imports C programs as the CLI does: a .c file or folder by path, with the lengths and
headers a program does not say typed in, and uploads of a .c file with its headers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from app.components.import_view import save_uploads
from app.testing import app_at
from engine.problem_import.cimport.rounding import has_fma

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


def _tick_replace(at, ticked: bool = True):
    at.checkbox(key="import_replace").set_value(ticked)
    return at


def test_importing_the_same_program_again_is_refused_until_replace_is_ticked(refinery_home) -> None:
    at = _import(app_at(PAGE), FIXTURES / "plain" / "scale_add.c")
    marker = refinery_home / "problems" / "c" / "c-scale-add" / "first-import"
    marker.write_text("kept")
    at = _import(at, FIXTURES / "plain" / "scale_add.c")
    assert not at.success and any("already imported as c-scale-add" in e.value for e in at.error)
    assert any("Replace a problem imported before" in i.value for i in at.info) and marker.exists()
    at = _import(_tick_replace(at), FIXTURES / "plain" / "scale_add.c")
    assert any("c-scale-add" in s.value for s in at.success) and not marker.exists()


def test_the_form_takes_preprocessor_defines_as_the_cli_does(refinery_home, tmp_path) -> None:
    program = tmp_path / "needs_len.c"
    program.write_text(SCALE_ADD_TEXT.replace("#define N 4096\n", ""))
    at = _import(app_at(PAGE), program)
    assert not at.success
    at.text_input(key="import_c_defines").set_value("N=512")
    at = _import(at, program)
    assert any("c-needs-len" in s.value for s in at.success), [e.value for e in at.error]


def test_the_form_takes_the_polybench_datasets_as_the_cli_does(refinery_home) -> None:
    at = app_at(PAGE)
    at.text_input(key="import_c_datasets").set_value("MEDIUM")
    at = _import(at, FIXTURES / "suite" / "stencils" / "smooth" / "smooth.c")
    made = next(s.value for s in at.success if "polybench-smooth" in s.value)
    assert "3 configurations, 2 hidden" in made, made  # MEDIUM shown; MINI and an odd size hidden (SMALL left out)


def test_the_report_says_the_c_program_ran_at_every_configuration(refinery_home) -> None:
    at = _import(app_at(PAGE), FIXTURES / "plain" / "scale_add.c")
    assert any("The program ran at each of its 3 configurations" in c.value for c in at.caption)
    assert not any("prove" in c.value for c in at.caption)


SCALE_ADD_TEXT = (FIXTURES / "plain" / "scale_add.c").read_text()
