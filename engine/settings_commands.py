"""`refinery settings`: every setting with its value, where that value came from (an environment
variable, settings.toml, or the default) and what it does; secrets are never printed."""

from __future__ import annotations

import json
import os
import tomllib

import typer
from rich.table import Table

from engine.cli_output import cli_console
from engine.settings import Settings, get_settings

console = cli_console()
SECRETS = ("team_password",)


def setting_rows(settings: Settings) -> list[dict]:
    """(name, value, source, description) of every setting, in declaration order."""
    path = settings.home / "settings.toml"
    in_file = tomllib.loads(path.read_text()) if path.is_file() else {}
    rows = []
    for name, spec in Settings.model_fields.items():
        value = getattr(settings, name)
        if name in SECRETS and value:
            value = "(set)"
        elif hasattr(value, "model_dump"):
            value = value.model_dump()
        source = ("environment" if f"REFINERY_{name.upper()}" in os.environ
                  else "settings.toml" if name in in_file else "default")
        rows.append({"name": name, "value": str(value) if not isinstance(value, dict | int | float | bool) else value,
                     "source": source, "description": spec.description or ""})
    return rows


def settings_command(as_json: bool = typer.Option(False, "--json", help="machine-readable")) -> None:
    """Every setting: its value, where it came from (REFINERY_* variable, settings.toml, default), what it does."""
    settings = get_settings()
    rows = setting_rows(settings)
    if as_json:
        console.print_json(json.dumps(rows, default=str))
        return
    title = f"settings ({settings.home / 'settings.toml'})"
    table = Table("setting", "value", "from", "what it does", title=title)
    for row in rows:
        table.add_row(row["name"], str(row["value"]), row["source"], row["description"])
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command("settings")(settings_command)
