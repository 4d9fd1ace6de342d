"""`refinery export KIND --format jsonl|parquet --out DIR [filters]`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import typer
from rich.progress import Progress, SpinnerColumn, TextColumn

from engine.cli.output import cli_console
from engine.export import KINDS, ExportFilters, export_dataset

console = cli_console()


def export_command(kind: str = typer.Argument(..., help=" | ".join(KINDS)),
                   fmt: str = typer.Option("jsonl", "--format", help="jsonl | parquet"),
                   out: Path = typer.Option(None, "--out", help="a new or empty folder to write (data/ + README.md); "
                                            "default: a new exports/KIND-TIME folder in the data folder"),
                   problem: list[str] = typer.Option(None, "--problem", help="repeat for several"),
                   source: list[str] = typer.Option(None, "--source", help="preferences: human and/or measured"),
                   min_agreement: float = typer.Option(0.0, help="preferences: minimum labeler agreement weight"),
                   verdict: list[str] = typer.Option(None, "--verdict"),
                   device: list[str] = typer.Option(None, "--device"),
                   since: datetime = typer.Option(None), until: datetime = typer.Option(None)) -> None:
    """Export a dataset, streamed, with a dataset card, into a folder of its own."""
    filters = ExportFilters(problems=tuple(problem or ()), label_sources=tuple(source or ("human", "measured")),
                            min_agreement=min_agreement, verdicts=tuple(verdict or ()), since=since, until=until,
                            devices=tuple(device or ()))
    try:
        # transient: the spinner goes when the export ends, so nothing of it prints after an error or the result
        with Progress(SpinnerColumn(), TextColumn("{task.description}"), console=console, transient=True) as progress:
            task = progress.add_task(f"exporting {kind} …")
            result = export_dataset(kind, fmt, out, filters,
                                    lambda name, n: progress.update(task, description=f"{kind}/{name}: {n} rows"))
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    for name, count in result.counts.items():
        console.print(f"{result.out_dir / result.files[name]}: {count} rows")
    console.print(f"exported {result.describe()}")
    console.print(f"card: {result.out_dir / 'README.md'}")


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)
