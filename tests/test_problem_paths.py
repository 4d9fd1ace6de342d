"""A problem folder names only regular files inside itself: a link, an absolute path or a `..` is refused with a
message naming it, the file behind it is never read, and import copies regular files only."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from engine.problem_import import import_path
from engine.problem_import.cimport.sources import SourceError, gather
from engine.problems import ProblemError, load_problem, scan
from engine.problems.library import BUILTIN_DIR
from engine.problems.paths import UnsafePath, copy_tree

SECRET = "team_password = 'hunter2-do-not-store'"
RELU = BUILTIN_DIR / "pytorch" / "relu"


@pytest.fixture
def secret(tmp_path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    (data / "settings.toml").write_text(SECRET + "\n")
    return data / "settings.toml"


@pytest.fixture
def relu(tmp_path) -> Path:
    """A copy of the built-in relu problem, to be spoiled."""
    folder = tmp_path / "problems" / "relu"
    shutil.copytree(RELU, folder)
    return folder


def _name_file(folder: Path, file: str) -> None:
    """Point the problem's first implementation at `file`."""
    toml = folder / "problem.toml"
    text = toml.read_text()
    first = text.split('file = "', 1)[1].split('"', 1)[0]
    toml.write_text(text.replace(f'file = "{first}"', f'file = "{file}"', 1))


def _everything(report, dest: Path) -> str:
    """Every word the import produced: its report and every file it left in the store."""
    words = [str(e) for e in report.errors] + report.notes + report.warnings
    words += [p.read_text(errors="replace") for p in dest.rglob("*") if p.is_file()]
    return "\n".join(words)


def _refused(folder: Path, tmp_path: Path, match: str) -> None:
    """Loading raises `match`; importing reports one error saying as much, and the secret is nowhere."""
    with pytest.raises(ProblemError, match=match) as raised:
        load_problem(folder)
    assert SECRET not in str(raised.value)
    dest = tmp_path / "home"
    report = import_path(folder, dest_root=dest)
    assert not report.imported and len(report.errors) == 1
    assert re.search(match, str(report.errors[0]))
    assert SECRET not in _everything(report, dest)


def test_the_built_in_problems_all_load(tmp_path):
    assert scan(BUILTIN_DIR).errors == ()


def test_an_implementation_that_is_a_link_to_a_secret_is_refused(relu, secret, tmp_path):
    os.symlink(secret, relu / "impls" / "leak.cu")
    _name_file(relu, "impls/leak.cu")
    _refused(relu, tmp_path, r"impls/leak\.cu:? is a symbolic link")


def test_an_implementation_in_a_linked_folder_is_refused(relu, secret, tmp_path):
    os.symlink(secret.parent, relu / "outside")
    _name_file(relu, "outside/settings.toml")
    _refused(relu, tmp_path, r"(through outside, which|outside:) is a symbolic link")


def test_an_absolute_implementation_path_is_refused(relu, secret, tmp_path):
    _name_file(relu, str(secret))
    _refused(relu, tmp_path, r"is an absolute path \(refused")


def test_an_implementation_path_that_climbs_out_is_refused(relu, secret, tmp_path):
    _name_file(relu, os.path.relpath(secret, relu))
    _refused(relu, tmp_path, r"leaves its folder with '\.\.' \(refused\)")


def test_a_reference_that_is_a_link_is_refused(relu, tmp_path):
    (relu / "reference.py").rename(tmp_path / "elsewhere.py")
    os.symlink(tmp_path / "elsewhere.py", relu / "reference.py")
    with pytest.raises(ProblemError, match=r"reference\.py: is a symbolic link"):
        load_problem(relu)


def test_a_problem_folder_holding_a_link_it_does_not_name_is_not_imported(relu, secret, tmp_path):
    os.symlink(secret, relu / "README.md")
    dest = tmp_path / "home"
    report = import_path(relu, dest_root=dest)
    assert [e.path for e in report.errors] == [relu / "README.md"]
    assert "symbolic link" in report.errors[0].cause
    assert SECRET not in _everything(report, dest)


def test_a_linked_kernelbench_file_is_named_and_the_rest_of_the_batch_goes_on(tmp_path, secret):
    level = tmp_path / "KernelBench" / "level1"
    level.mkdir(parents=True)
    (level / "1_Leak.py").symlink_to(secret)
    (level / "2_Broken.py").write_text("def f(:\n")
    dest = tmp_path / "home"
    report = import_path(level.parent, dest_root=dest)
    assert sorted(e.path.name for e in report.errors) == ["1_Leak.py", "2_Broken.py"]
    assert "symbolic link" in next(e.cause for e in report.errors if e.path.name == "1_Leak.py")
    assert SECRET not in _everything(report, dest)


def test_importing_a_link_by_its_own_name_is_refused(tmp_path, secret):
    (tmp_path / "19_ReLU.py").symlink_to(secret)
    report = import_path(tmp_path / "19_ReLU.py", dest_root=tmp_path / "home")
    assert "symbolic link" in report.errors[0].cause and SECRET not in str(report.errors[0])


def test_copy_tree_refuses_a_link_and_copies_regular_files(relu, secret, tmp_path):
    copy_tree(relu, tmp_path / "copy")
    assert (tmp_path / "copy" / "problem.toml").read_text() == (relu / "problem.toml").read_text()
    os.symlink(secret, relu / "impls" / "leak.cu")
    with pytest.raises(UnsafePath, match="leak.cu is a symbolic link"):
        copy_tree(relu, tmp_path / "again")
    assert not (tmp_path / "again" / "impls" / "leak.cu").exists()


def _program(folder: Path, include: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.c").write_text(f'#include "{include}"\nint main(void) {{ return 0; }}\n')
    return folder / "main.c"


def test_a_c_header_that_is_a_link_is_refused(tmp_path, secret):
    program = _program(tmp_path / "prog", "kernel.h")
    (tmp_path / "prog" / "kernel.h").symlink_to(secret)
    with pytest.raises(SourceError, match=r"main\.c:1: #include 'kernel\.h' is found at .* symbolic link") as raised:
        gather(program)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize("name", ["ABSOLUTE", "../data/settings.toml"])
def test_a_c_header_outside_the_folder_is_refused(tmp_path, secret, name):
    program = _program(tmp_path / "prog", str(secret) if name == "ABSOLUTE" else name)
    with pytest.raises(SourceError, match=r"main\.c:1: #include .* (is an absolute path|with '\.\.') \(refused"):
        gather(program)


def test_a_c_header_is_never_searched_for_in_the_folders_above(tmp_path, secret):
    program = _program(tmp_path / "prog", "data/settings.toml")  # tmp_path/data/settings.toml, one level up
    with pytest.raises(SourceError, match="not found"):
        gather(program)
