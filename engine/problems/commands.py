"""`refinery problems list | show SLUG | import PATH`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.syntax import Syntax
from rich.table import Table

from engine.problems.importer import import_path
from engine.problems.library import get_problem, scan_all

console = Console()
problems_app = typer.Typer(help="Browse and import problems.", no_args_is_help=True)


@problems_app.command("list")
def list_problems(kind: str = typer.Option(None, help="pytorch or c"),
                  tag: str = typer.Option(None, help="only problems with this tag")) -> None:
    """Every problem in the library and in this REFINERY_HOME, and every one that failed to load."""
    found = scan_all()
    table = Table("slug", "kind", "title", "configs (hidden)", "implementations", "tags")
    for p in found.problems:
        if (kind and p.kind != kind) or (tag and tag not in p.tags):
            continue
        table.add_row(p.slug, p.kind, p.title, f"{len(p.configs)} ({len(p.hidden_configs)})",
                      ", ".join(i.name for i in p.implementations), ", ".join(p.tags))
    console.print(table)
    for error in found.errors:
        console.print(f"[red]not loaded[/red] {error}")


@problems_app.command("show")
def show_problem(slug: str) -> None:
    """A problem's reference, visible configurations and analytical model."""
    try:
        problem = get_problem(slug)
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        raise typer.Exit(1) from exc
    console.print(f"[bold]{problem.title}[/bold] ({problem.kind}, {problem.source}) — {problem.description}")
    table = Table("config", "params", "GFLOP", "min MB", "FLOP/B")
    for config in problem.visible_configs:
        flops, nbytes, ai = problem.flops(config), problem.min_bytes(config), problem.arithmetic_intensity(config)
        table.add_row(config.name, str(config.params), f"{flops / 1e9:.3g}" if flops else "-",
                      f"{nbytes / 1e6:.3g}" if nbytes else "-", f"{ai:.3g}" if ai else "-")
    console.print(table)
    console.print(f"{len(problem.hidden_configs)} hidden configuration(s) are checked but not shown.")
    lexer = "python" if problem.kind == "pytorch" else "c"
    console.print(Syntax(problem.reference_source, lexer, line_numbers=True))


@problems_app.command("import")
def import_problems(path: Path) -> None:
    """Import a KernelBench checkout/level folder, one KernelBench file, or a problem folder."""
    with console.status(f"importing {path} …"):
        report = import_path(path)
    for problem in report.imported:
        console.print(f"[green]imported[/green] {problem.slug} ({len(problem.configs)} configurations)")
    for error in report.errors:
        console.print(f"[red]rejected[/red] {error}")
    if report.errors and not report.imported:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(problems_app, name="problems")
