"""The `refinery` command line. Each group is a module of this folder (`engine/cli/<group>.py`) that registers
itself here, so this file stays a table of contents. The command line is the top layer: nothing else in the
engine imports it, and each group only parses options, calls the engine and prints (`output`)."""

from __future__ import annotations

import typer

from engine.cli import device, export, flags, problems, rank, runs, settings, verify
from engine.store.database import use_settings_database

app = typer.Typer(help="Kernel Refinery: refine GPU kernels, label candidates, train rankers, export datasets.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)


@app.callback()
def _before_every_command() -> None:
    # The commands' database is the settings' one (db takes its URL from its caller).
    use_settings_database()


problems.register(app)
device.register(app)
runs.register(app)
export.register(app)
rank.register(app)
verify.register(app)
flags.register(app)
settings.register(app)

