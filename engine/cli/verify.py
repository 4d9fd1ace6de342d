"""`refinery verify FILE --problem SLUG`: verify one candidate file, print the evaluation, store it."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.console import Console

console = Console()


def verify(file: Path = typer.Argument(..., exists=True, dir_okay=False, help="candidate: .py, .cu or .c"),
           problem: str = typer.Option(..., "--problem", "-p", help="problem slug"),
           baseline: str = typer.Option("eager", help="PyTorch problems: eager, compile or both"),
           timeout: float = typer.Option(None, help="seconds before the worker is killed (default: settings)"),
           no_timing: bool = typer.Option(False, "--no-timing", help="check correctness and integrity only"),
           all_configs: bool = typer.Option(False, "--all-configs",
                                            help="PyTorch problems: also time every other visible configuration "
                                                 "(shown; the headline stays the timed one)"),
           store: bool = typer.Option(True, "--store/--no-store", help="write the evaluation to the database"),
           as_json: bool = typer.Option(False, "--json", help="print the record as JSON instead of tables"),
           verbose: bool = typer.Option(False, "--verbose", "-v", help="show the whole log"),
           ray: bool = typer.Option(None, "--ray/--no-ray",
                                    help="verify on a Ray worker (default: when RAY_ADDRESS is set)")) -> None:
    """Verify a candidate: build, correctness on every configuration (hidden ones too), integrity, timing."""
    from engine.compilation.candidate import language_of
    from engine.problems import get_problem
    from engine.verify.evaluate import VerifyOptions, evaluate
    from engine.verify.report import render
    from engine.verify.scale import make_pool

    try:
        found = get_problem(problem)
        language = language_of(file)
    except (KeyError, ValueError) as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        raise typer.Exit(2) from exc
    source = file.read_text()
    from engine.sandbox import boundary

    if boundary().missing:
        console.print(f"[yellow]{boundary().summary()}; missing: {'; '.join(boundary().missing)}[/yellow]")
    options = VerifyOptions(baseline=baseline, timeout_s=timeout, timing=not no_timing, time_all=all_configs)
    with console.status(f"verifying {file.name} on {found.slug} …"):
        try:
            pool = make_pool(ray=ray)
        except (RuntimeError, ValueError) as exc:  # no ray package, no cluster, too few CPUs or GPUs
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2) from exc
        try:
            result = evaluate(found, source, language, pool=pool, options=options)
        finally:
            pool.close()
    if as_json:
        print(json.dumps(result.to_json(), indent=1))
    else:
        console.print(render(result, verbose=verbose))
    if store:
        from engine.store.evaluation import store_evaluation

        candidate_id, evaluation_id = store_evaluation(result, problem_slug=found.slug, source=source,
                                                       language=language, origin="human")
        if not as_json:
            console.print(f"[dim]stored: candidate {candidate_id}, evaluation {evaluation_id}[/dim]")
    if result.verdict.is_failure:
        raise typer.Exit(1)




def sandbox(check: bool = typer.Option(True, "--check/--no-check",
                                       help="Run the boundary's self-check: a probe started as a runner and as a "
                                            "problem probe reports what it can see and do")) -> None:
    """What candidate code runs behind on this machine (namespaces, seccomp, cgroup, own user), what is missing,
    and what a sandboxed program can and cannot see and do, observed from inside."""
    from engine.sandbox import boundary

    where = boundary()
    console.print(where.summary())
    for line in where.missing:
        console.print(f"[yellow]missing:[/yellow] {line}")
    failed = False
    if check:
        from engine.sandbox.selfcheck import run_self_check
        from engine.settings import get_settings

        for finding in run_self_check(get_settings().home):
            mark = "[green]ok[/green]  " if finding.ok else "[red]FAIL[/red]"
            console.print(f"{mark} {finding.who}: {finding.check} ({finding.observed})", markup=True, highlight=False)
            failed = failed or not finding.ok
    if where.missing or failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)
    app.command("sandbox")(sandbox)
