"""The Problems page: browse, filter, read a reference, import with the loader's errors shown."""

from __future__ import annotations

from pathlib import Path

from app.testing import app_at

PAGE = "views/problems.py"


def _table(at):
    return at.dataframe(key="problems_table").value


def test_the_library_is_listed_with_the_first_problem_open(refinery_home) -> None:
    at = app_at(PAGE)
    slugs = list(_table(at)["slug"])
    assert "transpose" in slugs
    assert any("Visible configurations" in m.value for m in at.markdown)
    assert at.html and "style=" in at.html[0].value  # the highlighted reference


def test_filtering_by_kind_leaves_only_that_kind(refinery_home) -> None:
    at = app_at(PAGE)
    at.multiselect(key="pf_kind").set_value(["c"]).run()
    assert set(_table(at)["kind"]) == {"c"}


def test_the_table_says_which_problems_run_on_the_cpu_and_can_keep_only_those(refinery_home) -> None:
    from engine.problems import scan_all

    cpu = {p.slug for p in scan_all().problems if any(i.device == "cpu" for i in p.implementations)}
    at = app_at(PAGE)
    table = _table(at)
    assert cpu and set(table["slug"]) - cpu  # the library has both
    assert {slug for slug, runs in zip(table["slug"], table["runs on the CPU"], strict=True) if runs} == cpu
    at.toggle(key="pf_cpu").set_value(True).run()
    assert set(_table(at)["slug"]) == cpu


def test_a_search_with_no_match_says_so(refinery_home) -> None:
    at = app_at(PAGE)
    at.text_input(key="pf_text").set_value("no such kernel anywhere").run()
    assert any("No problem matches" in i.value for i in at.info)


def test_selecting_a_row_shows_that_problem(refinery_home) -> None:
    at = app_at(PAGE)
    slugs = list(_table(at)["slug"])
    at.session_state["problems_table"] = {"selection": {"rows": [slugs.index("transpose")], "columns": [],
                                                        "cells": []}}
    at.run()
    assert any("Slug `transpose`" in c.value for c in at.caption)
    assert any("transpose" in h.value for h in at.html)


def test_importing_a_missing_path_shows_the_loaders_error(refinery_home) -> None:
    at = app_at(PAGE)
    at.text_input(key="import_path").set_value("/nowhere/KernelBench")
    at.button[[b.label for b in at.button].index("Import")].click().run()
    assert not at.exception
    assert any("no such file or folder" in e.value for e in at.error)


def test_importing_a_kernelbench_file_with_missing_names_names_the_cause(refinery_home, tmp_path: Path) -> None:
    bad = tmp_path / "19_Broken.py"
    bad.write_text("import torch\nclass Model(torch.nn.Module):\n    pass\n")
    at = app_at(PAGE)
    at.text_input(key="import_path").set_value(str(bad))
    at.button[[b.label for b in at.button].index("Import")].click().run()
    errors = [e.value for e in at.error]
    assert any("19_Broken.py" in e and "get_inputs" in e for e in errors), errors
    assert not at.exception


def test_an_empty_import_path_asks_for_one(refinery_home) -> None:
    at = app_at(PAGE)
    at.button[[b.label for b in at.button].index("Import")].click().run()
    assert any("Type a path first" in w.value for w in at.warning)


def test_a_broken_imported_folder_is_reported_not_fatal(refinery_home) -> None:
    folder = refinery_home / "problems" / "c" / "broken"
    folder.mkdir(parents=True)
    (folder / "problem.toml").write_text("title = 'x'\nkind = 'c'\n")
    at = app_at(PAGE)
    assert not at.exception
    assert any("did not load" in e.label for e in at.expander)
    assert any("broken" in e.value for e in at.error)


def test_a_kernelbench_import_says_what_ran_and_what_was_only_shape_checked(refinery_home) -> None:
    at = app_at(PAGE)
    at.text_input(key="import_path").set_value(str(Path(__file__).parent / "fixtures" / "kernelbench" / "level1"
                                                   / "2_Dropout.py"))
    at.button[[b.label for b in at.button].index("Import")].click().run()
    assert any("kb-level1-2-dropout" in s.value for s in at.success), [e.value for e in at.error]
    said = [c.value for c in at.caption if c.value.startswith("The reference ")]
    assert said and ("only shape-checked on meta tensors" in said[0] or "ran on the CPU" in said[0])
    assert not any("prove it works" in c.value for c in at.caption)
