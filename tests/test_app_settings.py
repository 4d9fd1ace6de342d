"""The Settings page: every setting shown with its source; one changed into settings.toml, validated first."""

from __future__ import annotations

import tomllib

from app.testing import app_at

PAGE = "views/settings.py"


def _table(at):
    """The settings table (display-only tables carry no key in AppTest)."""
    return next(df.value for df in at.dataframe if "description" in df.value.columns)


def test_every_setting_is_listed_with_its_value_source_and_meaning(refinery_home) -> None:
    at = app_at(PAGE)
    assert not at.exception
    table = _table(at).set_index("name")
    assert "llm_prices" in table.index and "US dollars per million tokens" in table.loc["llm_prices", "description"]
    assert table.loc["overlap_share", "source"] == "default"


def test_llm_prices_are_saved_into_settings_toml_and_take_effect(refinery_home) -> None:
    from engine.settings import get_settings

    (refinery_home / "settings.toml").write_text("# the team's file\noverlap_share = 0.3\n")
    at = app_at(PAGE)
    at.selectbox(key="settings_name").set_value("llm_prices")
    at.text_input(key="settings_value").set_value('{ "gpt-4o-mini" = [0.15, 0.6] }')
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    text = (refinery_home / "settings.toml").read_text()
    assert text.startswith("# the team's file") and tomllib.loads(text)["overlap_share"] == 0.3
    assert get_settings().llm_prices == {"gpt-4o-mini": (0.15, 0.6)}
    assert _table(at).set_index("name").loc["llm_prices", "source"] == "settings.toml"


def test_an_invalid_value_is_refused_in_words_and_nothing_is_written(refinery_home) -> None:
    at = app_at(PAGE)
    at.selectbox(key="settings_name").set_value("overlap_share")
    at.text_input(key="settings_value").set_value("3")
    at.button[0].click().run()
    assert any("overlap_share = 3" in e.value for e in at.error)
    assert not (refinery_home / "settings.toml").exists()


def test_the_command_line_sets_a_value_the_same_way(refinery_home) -> None:
    from typer.testing import CliRunner

    from engine.cli import app

    result = CliRunner().invoke(app, ["settings", "--set", "llm_model=gpt-4o-mini", "--json"])
    assert result.exit_code == 0, result.output
    assert tomllib.loads((refinery_home / "settings.toml").read_text())["llm_model"] == "gpt-4o-mini"
    refused = CliRunner().invoke(app, ["settings", "--set", "home=/elsewhere"])
    assert refused.exit_code == 1 and "cannot be set here" in refused.output
