"""The Ranker page: an empty state, then metrics per version against baselines, curve, features, BT order."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from engine.rank.model import FitConfig
from engine.rank.synthetic import SyntheticConfig, write_synthetic
from engine.rank.training import TrainConfig, train


def table_with(at: AppTest, column: str):
    """The first table on the page that has `column` (display-only tables carry no key in AppTest)."""
    return next(df.value for df in at.dataframe if column in df.value.columns)


PAGE = str(Path(__file__).resolve().parents[1] / "app" / "views" / "ranker.py")


def test_without_a_ranker_the_page_says_so(refinery_home):
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception
    assert any("No ranker trained yet" in i.value for i in at.info)


def test_a_trained_version_shows_its_metrics_baselines_and_the_problem_order(refinery_home):
    write_synthetic(SyntheticConfig(problems=5, candidates_per_problem=8))
    train(TrainConfig(fit=FitConfig(min_steps=100)))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception and not at.error
    assert any("10 %" in m.label for m in at.metric)
    versions = table_with(at, "version")
    assert versions["version"].tolist() == [1]
    baselines = table_with(at, "ranker")
    assert {"ranker", "random", "fewer registers", "higher occupancy"} <= set(baselines.columns)
    assert len(table_with(at, "strength")) > 0


def test_the_train_button_stores_a_new_version(refinery_home):
    write_synthetic(SyntheticConfig(problems=4, candidates_per_problem=6))
    at = AppTest.from_file(PAGE, default_timeout=120).run()
    at.button(key="ranker_train").click().run()
    assert not at.exception
    assert any("Stored ranker v1" in s.value for s in at.success)
    assert table_with(at, "version")["version"].tolist() == [1]


def test_the_pages_auc_names_its_pair_set_and_rank_eval_prints_the_same_number_for_it(refinery_home):
    from typer.testing import CliRunner

    from engine.cli import app

    write_synthetic(SyntheticConfig(problems=5, candidates_per_problem=8))
    row = train(TrainConfig(fit=FitConfig(min_steps=100)))
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    [auc] = [m for m in at.metric if m.label.startswith("AUC")]
    assert auc.label == "AUC, all held-out pairs"
    pairs = row.metrics["heldout"]["all"]["pairs"]
    assert any(f"on the {pairs:,} pairs (measured and human)" in c.value and "rank eval" in c.value
               for c in at.caption)
    evaluated = CliRunner().invoke(app, ["rank", "eval", "--version", str(row.version)], env={"COLUMNS": "200"})
    assert evaluated.exit_code == 0, evaluated.output
    [line] = [line for line in evaluated.output.splitlines() if "all (measured + human)" in line]
    assert str(pairs) in line and auc.value in line
