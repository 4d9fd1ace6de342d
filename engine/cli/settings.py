"""`refinery settings`: every setting with its value, where that value came from (an environment
variable, settings.toml, or the default) and what it does; secrets are never printed."""

from __future__ import annotations

import json
import os
import tomllib

import tomlkit
import typer
from pydantic import ValidationError
from rich.table import Table

from engine.cli.output import cli_console
from engine.settings import Settings, get_settings

console = cli_console()
SECRETS = ("team_password",)
NOT_IN_FILE = ("home",)  # the file lives in home: home itself comes from REFINERY_HOME or the default


class SettingError(ValueError):
    """A setting that cannot be saved as given: unknown, not settable in the file, or an invalid value."""


def editable_settings() -> list[str]:
    """The settings a person may change in settings.toml (secrets are set by hand, home by the environment)."""
    return [name for name in Settings.model_fields if name not in SECRETS + NOT_IN_FILE]


def toml_value(raw: str) -> object:
    """A value as typed: TOML (`0.3`, `true`, `[1, 2]`, `{ "gpt-4o-mini" = [0.15, 0.6] }`, `"text"`), else the
    text itself, so a URL or a model name needs no quotes."""
    try:
        return tomlkit.parse(f"v = {raw.strip()}")["v"].unwrap()
    except Exception:  # noqa: BLE001 - anything that is not a TOML value is taken as text
        return raw.strip()


def save_setting(name: str, raw: str) -> Settings:
    """Validate `name = raw` against the settings' own types and limits, then write it into
    `$REFINERY_HOME/settings.toml`, keeping the file's other lines and comments; the new settings.

    An environment variable still wins over the file, as it does everywhere."""
    if name not in editable_settings():
        raise SettingError(f"{name!r} cannot be set here; one of {', '.join(editable_settings())}")
    value = toml_value(raw)
    try:
        Settings(**{name: value})
    except ValidationError as exc:
        raise SettingError(f"{name} = {raw.strip()}: " + "; ".join(e["msg"] for e in exc.errors())) from exc
    path = get_settings().home / "settings.toml"
    document = tomlkit.parse(path.read_text()) if path.is_file() else tomlkit.document()
    document[name] = value
    path.write_text(tomlkit.dumps(document))
    get_settings.cache_clear()
    return get_settings()


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


def settings_command(as_json: bool = typer.Option(False, "--json", help="machine-readable"),
                     assign: list[str] = typer.Option([], "--set", help="NAME=VALUE written into settings.toml "
                                                      "(VALUE as TOML, or plain text); repeat for several")) -> None:
    """Every setting: its value, where it came from (REFINERY_* variable, settings.toml, default), what it does."""
    for item in assign:
        name, sep, raw = item.partition("=")
        try:
            if not sep:
                raise SettingError(f"{item!r}: expected NAME=VALUE")
            save_setting(name.strip(), raw)
        except SettingError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(1) from exc
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
