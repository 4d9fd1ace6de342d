"""The Problems page imports C programs as the CLI does: a .c file or folder by path, with the lengths and
headers a program does not say typed in, and uploads of a .c file with its headers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from app.components.problems_view import save_uploads
from app.testing import app_at

PAGE = "views/problems.py"
FIXTURES = Path(__file__).parent / "fixtures" / "c_import"


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
