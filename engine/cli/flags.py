"""`refinery flags list|clear|reject`: flagged results (implausible speedups) and a person's decision on them."""

from __future__ import annotations

import typer
from rich.table import Table

from engine.cli.output import JSON_OPTION, cli_console, print_json

console = cli_console()
flags = typer.Typer(help="Flagged results: none earns a speed reward or enters a dataset until a person clears it.",
                    no_args_is_help=True)


@flags.command("list")
def list_flags(all_flags: bool = typer.Option(False, "--all", help="reviewed ones too"),
               run: int = typer.Option(None, "--run", help="only this run's"), as_json: bool = JSON_OPTION) -> None:
    """Flagged evaluations waiting for a person (newest first)."""
    from db.evaluations import list_flags as query

    rows = query(awaiting_only=not all_flags, run_id=run)
    if as_json:
        print_json([{"evaluation": row.evaluation_id, "candidate": row.candidate_id, "problem": row.problem_slug,
                     "run": row.run_id, "speedup": row.speedup, "review": row.review, "reviewer": row.reviewer,
                     "reason": row.reason} for row in rows])
        return
    if not rows:
        console.print("no flagged results" + ("" if all_flags else " waiting for review"))
        return
    table = Table("evaluation", "candidate", "problem", "run", "speedup", "review", "reason")
    for row in rows:
        review = f"{row.review} by {row.reviewer}" if row.review else "waiting"
        table.add_row(str(row.evaluation_id), str(row.candidate_id), row.problem_slug, str(row.run_id or "-"),
                      f"{row.speedup:.2f}×" if row.speedup else "-", review, row.reason)
    console.print(table)


def _decide(evaluation: int, decision: str, reviewer: str, note: str) -> None:
    from engine.reward.review import review_flag

    try:
        row = review_flag(evaluation, decision, reviewer, note)
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    console.print(f"evaluation {row.evaluation_id} {row.review} by {row.reviewer}; reward now {row.reward:.3f}")


@flags.command("clear")
def clear(evaluation: int = typer.Argument(..., help="evaluation id (from `refinery flags list`)"),
          reviewer: str = typer.Option(..., "--reviewer", "-r", help="who decided"),
          note: str = typer.Option("", "--note", "-n", help="why: stored with the decision")) -> None:
    """The speedup is real: pay its speed reward and admit it to datasets and rankers."""
    _decide(evaluation, "cleared", reviewer, note)


@flags.command("reject")
def reject(evaluation: int = typer.Argument(..., help="evaluation id (from `refinery flags list`)"),
           reviewer: str = typer.Option(..., "--reviewer", "-r", help="who decided"),
           note: str = typer.Option("", "--note", "-n", help="why: stored with the decision")) -> None:
    """The speedup is not real: score the result as a cheat; it stays out of datasets."""
    _decide(evaluation, "rejected", reviewer, note)


def register(app: typer.Typer) -> None:
    app.add_typer(flags, name="flags")
