"""The Analyze page: paste a CUDA file, give sizes, see the static report and the findings; errors in words."""

from __future__ import annotations

from pathlib import Path

from app import main
from app.testing import app_at

PAGE = "views/analyze.py"
FIXTURES = Path(__file__).parent / "fixtures" / "analyze"


def _analyse(at, source: str, sizes: str = ""):
    at.text_area(key="analyze_source").set_value(source)
    at.text_input(key="analyze_sizes").set_value(sizes)
    return at.button(key="analyze_go").click().run(timeout=120)


def test_the_page_opens_with_the_form_and_no_report(refinery_home) -> None:
    at = app_at(PAGE)
    assert not at.exception and not at.error
    assert [t.value for t in at.title] == ["Analyze"]
    assert at.text_area(key="analyze_source").value == "" and not at.dataframe


def test_a_pasted_program_shows_its_kernels_launch_and_findings(refinery_home) -> None:
    at = _analyse(app_at(PAGE), (FIXTURES / "transpose_spaced.cu").read_text(), "N=2048")
    assert not at.exception and not at.error, [e.value for e in at.error]
    row = at.dataframe[0].value.iloc[0]
    assert (row["kernel"], row["block"], row["grid"]) == ("transpose_naive", "32×8×1", "64×256×1")
    assert int(row["registers"]) > 0 and row["occupancy"].startswith("100%")
    markdown = "\n".join(m.value for m in at.markdown)
    assert "uncoalesced global stores" in markdown and "Change:" in markdown
    assert any("Diagnosis" in c.value for c in at.code)  # the feedback text a run would send


def test_sizes_the_file_reads_at_run_time_are_asked_for(refinery_home) -> None:
    at = _analyse(app_at(PAGE), (FIXTURES / "transpose_spaced.cu").read_text())
    assert any("--size N=VALUE" in w.value for w in at.warning)


def test_a_file_that_does_not_compile_shows_the_compiler_error_in_words(refinery_home) -> None:
    at = _analyse(app_at(PAGE), (FIXTURES / "broken.cu").read_text())
    assert not at.exception
    assert any('identifier "factor" is undefined' in e.value for e in at.error)


def test_a_malformed_size_is_said_in_words(refinery_home) -> None:
    at = _analyse(app_at(PAGE), (FIXTURES / "vector_add_main.cu").read_text(), "N")
    assert any("NAME=VALUE" in e.value for e in at.error)


def test_pressing_analyze_with_nothing_pasted_asks_for_source(refinery_home) -> None:
    at = app_at(PAGE)
    at.button(key="analyze_go").click().run()
    assert any("Paste CUDA source" in w.value for w in at.warning)


def test_the_analyze_page_is_listed_under_tools_when_its_script_exists(tmp_path: Path) -> None:
    pages_dir = tmp_path / "pages"
    pages_dir.mkdir()
    for name in ("problems.py", "new_run.py", "run_live.py", "runs.py", "analyze.py"):
        (pages_dir / name).write_text("")
    assert [title for _, title, _ in main.page_specs(pages_dir)["Tools"]] == ["Analyze"]
    (pages_dir / "analyze.py").unlink()
    assert "Tools" not in main.page_specs(pages_dir)
