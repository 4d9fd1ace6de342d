"""What an import does with what it finds again or finds odd: a problem imported before is left as it is unless
the import says replace (runs name a problem by its slug); a KernelBench file is named and tagged from its file
however it comes in; a `.c` file without main in a batch is said, not passed over."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from engine.cli import app
from engine.problem_import import import_path
from engine.problems import load_problem

FIXTURES = Path(__file__).parent / "fixtures"
DROPOUT = FIXTURES / "kernelbench" / "level1" / "2_Dropout.py"
SCALE_ADD = FIXTURES / "c_import" / "plain" / "scale_add.c"


def _mark(folder: Path) -> Path:
    """A file only the first import's folder holds: gone if a second import replaced the folder."""
    marker = folder / "first-import"
    marker.write_text("kept")
    return marker


def test_a_kernelbench_file_imported_again_is_refused_and_the_problem_left_as_it_was(tmp_path):
    first = import_path(DROPOUT, dest_root=tmp_path)
    assert [p.slug for p in first.imported] == ["kb-level1-2-dropout"]
    marker = _mark(first.imported[0].folder)
    again = import_path(DROPOUT, dest_root=tmp_path)
    assert again.imported == [] and again.existing == ["kb-level1-2-dropout"]
    assert "is already imported as kb-level1-2-dropout" in again.errors[0].cause
    assert marker.exists()


def test_replace_overwrites_a_problem_imported_before(tmp_path):
    marker = _mark(import_path(DROPOUT, dest_root=tmp_path).imported[0].folder)
    again = import_path(DROPOUT, dest_root=tmp_path, replace=True)
    assert [p.slug for p in again.imported] == ["kb-level1-2-dropout"] and not again.errors
    assert not marker.exists()


def test_a_c_program_imported_again_is_refused_unless_replaced(tmp_path):
    first = import_path(SCALE_ADD, dest_root=tmp_path)
    assert [p.slug for p in first.imported] == ["c-scale-add"], first.errors
    marker = _mark(first.imported[0].folder)
    again = import_path(SCALE_ADD, dest_root=tmp_path)
    assert again.existing == ["c-scale-add"] and "already imported" in again.errors[0].cause
    assert marker.exists() and load_problem(tmp_path / "c" / "c-scale-add").slug == "c-scale-add"


def test_the_cli_refuses_a_second_import_and_names_replace(refinery_home):
    assert CliRunner().invoke(app, ["problems", "import", str(DROPOUT)]).exit_code == 0
    again = CliRunner().invoke(app, ["problems", "import", str(DROPOUT)])
    said = " ".join(again.output.split())
    assert again.exit_code == 1 and "already imported as kb-level1-2-dropout" in said and "--replace" in said
    assert CliRunner().invoke(app, ["problems", "import", str(DROPOUT), "--replace"]).exit_code == 0


def test_a_kernelbench_file_by_path_is_named_and_tagged_from_its_file(tmp_path):
    loose = tmp_path / "mine" / "19_My_ReLU.py"
    loose.parent.mkdir()
    shutil.copy(DROPOUT, loose)
    report = import_path(DROPOUT, dest_root=tmp_path / "a")
    report_loose = import_path(loose, dest_root=tmp_path / "b")
    by_level, by_name = report.imported[0], report_loose.imported[0]
    assert by_level.slug == "kb-level1-2-dropout" and by_level.tags == ("kernelbench", "level1")
    assert by_name.slug == "kb-19-my-relu" and by_name.tags == ("kernelbench",) and by_name.title == "My ReLU"
    assert by_name.source == "kernelbench"


def test_a_c_file_without_main_in_a_batch_is_reported(tmp_path):
    batch = tmp_path / "batch"
    (batch / "ok").mkdir(parents=True)
    (batch / "lone").mkdir()
    shutil.copy(SCALE_ADD, batch / "ok" / "scale_add.c")
    (batch / "lone" / "helpers.c").write_text("float twice(float x) { return 2 * x; }\n")
    report = import_path(batch, dest_root=tmp_path / "home")
    assert [p.slug for p in report.imported] == ["c-scale-add"]
    lone = [n for n in report.notes if n.startswith(str(batch / "lone" / "helpers.c"))]
    assert lone and "defines no main" in lone[0] and "not imported" in lone[0]
