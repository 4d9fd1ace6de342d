"""How every `refinery` command prints, for a person at a terminal and for a script reading its output.

At a terminal, rich fits tables to the window. Written to a pipe or a file, rich would fit them to 80
columns and cut slugs and cells ("polybench-…"); a script needs them whole, so there the console is as
wide as the longest line needs (COLUMNS, when set, still decides). Commands that list things also offer
`--json`: one JSON array of objects with the raw values (numbers as numbers, times in ISO 8601), never
wrapped, highlighted or cut.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import typer
from rich.console import Console, ConsoleDimensions

SCRIPT_WIDTH = 10_000  # columns when output goes to a script: no table cell is cut
JSON_OPTION = typer.Option(False, "--json", help="print the list as a JSON array of objects (for scripts)")


class CliConsole(Console):
    """A rich console that cuts nothing when its output is not a terminal.

    COLUMNS is read when something is printed, not when the console is made: a console made at import
    would otherwise keep the width of whatever environment imported it first (a test runner's worker sets
    COLUMNS=80 before the test that runs a command with COLUMNS=200 or none)."""

    def __init__(self, *args: Any, width: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, width=width, **kwargs)
        self.explicit_width = width is not None

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self.is_terminal or self.explicit_width:
            return size
        columns = os.environ.get("COLUMNS", "")
        return ConsoleDimensions(int(columns) if columns.isdigit() else SCRIPT_WIDTH, size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)


def cli_console() -> CliConsole:
    return CliConsole()


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return str(value)


def print_json(records: Sequence[dict[str, Any]] | dict[str, Any]) -> None:
    """`records` as one line of JSON on stdout, exactly as a script parses it."""
    typer.echo(json.dumps(records, default=_plain, ensure_ascii=False))
    sys.stdout.flush()
