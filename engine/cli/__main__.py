"""`python -m engine.cli`: the `refinery` command where the script is not installed (tests, a bare checkout)."""

from engine.cli import app

app()
