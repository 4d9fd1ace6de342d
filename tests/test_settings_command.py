"""`refinery settings` says every setting's value, where it came from and what it does; bad values are
refused in words; secrets are never printed."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from engine.cli import app
from engine.settings import Settings, get_settings


def test_every_setting_is_described_with_its_source(refinery_home, monkeypatch):
    refinery_home.mkdir(parents=True, exist_ok=True)
    (refinery_home / "settings.toml").write_text('llm_model = "from-the-file"\nteam_password = "hunter2"\n')
    monkeypatch.setenv("REFINERY_LLM_TEMPERATURE", "0.3")
    get_settings.cache_clear()
    done = CliRunner().invoke(app, ["settings", "--json"])
    assert done.exit_code == 0, done.output
    rows = {row["name"]: row for row in json.loads(done.output)}
    assert set(rows) == set(Settings.model_fields) and all(row["description"] for row in rows.values())
    assert (rows["llm_model"]["value"], rows["llm_model"]["source"]) == ("from-the-file", "settings.toml")
    assert (rows["llm_temperature"]["value"], rows["llm_temperature"]["source"]) == (0.3, "environment")
    assert rows["gpu_arch"]["source"] == "default"
    assert "hunter2" not in done.output and rows["team_password"]["value"] == "(set)"
    get_settings.cache_clear()


@pytest.mark.parametrize(("name", "value"), [("llm_temperature", "7"), ("gpu_arch", "hopper"),
                                             ("default_proposer", "oracle"), ("overlap_share", "1.5")])
def test_a_bad_value_is_refused_naming_the_setting(refinery_home, monkeypatch, name, value):
    monkeypatch.setenv(f"REFINERY_{name.upper()}", value)
    with pytest.raises(ValidationError, match=name):
        Settings()
