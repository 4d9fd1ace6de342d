"""The `refinery` command line. Each group lives beside the code it drives (`engine/<pkg>/commands.py`)
and registers itself here, so this file stays a table of contents."""

from __future__ import annotations

import typer

from engine import review_commands, run_commands, settings_commands
from engine.analysis import commands as analysis_commands
from engine.database import use_settings_database
from engine.export import commands as export_commands
from engine.problems import commands as problem_commands
from engine.rank import commands as rank_commands
from engine.verify import commands as verify_commands

app = typer.Typer(help="Kernel Refinery: refine GPU kernels, label candidates, train rankers, export datasets.",
                  no_args_is_help=True, pretty_exceptions_show_locals=False)


@app.callback()
def _before_every_command() -> None:
    # The commands' database is the settings' one (db takes its URL from its caller).
    use_settings_database()


problem_commands.register(app)
analysis_commands.register(app)
run_commands.register(app)
export_commands.register(app)
rank_commands.register(app)
verify_commands.register(app)
review_commands.register(app)
settings_commands.register(app)


if __name__ == "__main__":
    app()
