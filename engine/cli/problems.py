"""`refinery problems list | show SLUG | import PATH`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.syntax import Syntax
from rich.table import Table

from engine.cli.output import JSON_OPTION, cli_console, print_json
from engine.problem_import.cimport import ImportOptions
from engine.problem_import.cimport.configs import DEFAULT_VISIBLE
from engine.problem_import.importer import NO_PROBLEM, import_path
from engine.problem_import.probe_batch import PROBE_MEMORY_MB, PROBE_TIMEOUT_S
from engine.problems.library import get_problem, scan_all

console = cli_console()
problems_app = typer.Typer(help="Browse and import problems.", no_args_is_help=True)


@problems_app.command("list")
def list_problems(kind: str = typer.Option(None, help="pytorch or c"),
                  tag: str = typer.Option(None, help="only problems with this tag"),
                  as_json: bool = JSON_OPTION) -> None:
    """Every problem in the library and in this REFINERY_HOME, and every one that failed to load."""
    found = scan_all()
    records = [{"slug": p.slug, "kind": p.kind, "title": p.title, "configs": len(p.configs),
                "hidden_configs": len(p.hidden_configs), "implementations": [i.name for i in p.implementations],
                "tags": list(p.tags)}
               for p in found.problems if not ((kind and p.kind != kind) or (tag and tag not in p.tags))]
    if as_json:
        print_json(records)
        return
    table = Table("slug", "kind", "title", "configs (hidden)", "implementations", "tags")
    for r in records:
        table.add_row(r["slug"], r["kind"], r["title"], f"{r['configs']} ({r['hidden_configs']})",
                      ", ".join(r["implementations"]), ", ".join(r["tags"]))
    console.print(table)
    for error in found.errors:
        console.print(f"[red]not loaded[/red] {error}")


def _specs(values) -> str:
    return ", ".join(str(v) for v in values) or "-"


@problems_app.command("show")
def show_problem(slug: str,
                 hidden: bool = typer.Option(False, "--hidden", help="list the hidden configurations too"),
                 probe: bool = typer.Option(True, help="run a library reference (sandboxed) for its shapes")) -> None:
    """A problem's reference and, per configuration: sizes, init arguments, input and output shapes and
    dtypes, FLOPs and minimum bytes of one call."""
    from engine.problem_import.signatures import signatures

    try:
        problem = get_problem(slug)
    except KeyError as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        raise typer.Exit(1) from exc
    console.print(f"[bold]{problem.title}[/bold] ({problem.kind}, {problem.source}) — {problem.description}")
    for warning in problem.warnings:
        console.print(f"[red]warning[/red] {escape(warning)}")
    for note in problem.notes:
        console.print(f"[yellow]note[/yellow] {escape(note)}")
    shown = problem.configs if hidden else problem.visible_configs
    with console.status("running the reference for its shapes …"):
        found, why = signatures(problem, probe=probe)
    for config in shown:
        signature = found.get(config.name)
        flops, nbytes = problem.flops(config), problem.min_bytes(config)
        params = ", ".join(f"{k}={v}" for k, v in config.params.items()) or "no sizes"
        console.print(f"[bold]{config.name}[/bold]{' (hidden)' if config.hidden else ''} — {params}")
        if signature is not None:
            console.print(f"  init     {_specs(signature.init)}")
            console.print(f"  inputs   {_specs(signature.inputs)}")
            console.print(f"  outputs  {_specs(signature.outputs)}")
        figures = [f"{flops / 1e9:.4g} GFLOP" if flops is not None else "FLOPs unknown",
                   f"{nbytes / 1e6:.4g} MB minimum" if nbytes is not None else "bytes unknown"]
        if flops and nbytes:
            figures.append(f"{flops / nbytes:.3g} FLOP/B")
        source = "analytical model" if problem.flops_expr else "counted when imported" if signature else ""
        console.print("  " + " · ".join(figures) + (f" ({source})" if source and flops is not None else ""))
    if why:
        console.print(f"[yellow]shapes unknown[/yellow]: {why}")
    if not hidden:
        console.print(f"{len(problem.hidden_configs)} hidden configuration(s) are checked but not shown "
                      "(--hidden lists them).")
    lexer = "python" if problem.kind == "pytorch" else "c"
    longest = max((len(line) for line in problem.reference_source.splitlines()), default=0)
    console.print(Syntax(problem.reference_source, lexer, line_numbers=True, code_width=longest + 1))


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, sep, expression = value.partition("=")
        if not sep or not name.strip() or not expression.strip():
            raise typer.BadParameter(f"{value!r}: expected NAME=EXPRESSION", param_hint=option)
        pairs[name.strip()] = expression.strip()
    return pairs


@problems_app.command("import")
def import_problems(path: Path,
                    timeout: float = typer.Option(PROBE_TIMEOUT_S, help="seconds each file may run, all its "
                                                  "configurations together"),
                    memory_mb: int = typer.Option(PROBE_MEMORY_MB, help="memory of the probing sandbox"),
                    include: list[Path] = typer.Option([], "--include", "-I", help="C: a folder holding headers the "
                                                       "program includes (PolyBench's utilities/ is found by itself)"),
                    entry: str = typer.Option(None, help="C: the kernel's name, where main calls several functions "
                                              "that could be it"),
                    size: list[str] = typer.Option([], "--size", help="C: ARG=EXPRESSION, the element count of an "
                                                   "array argument over the sizes (M * N), where main does not say it"),
                    define: list[str] = typer.Option([], "--define", "-D", help="C: NAME[=VALUE] for the preprocessor "
                                                     "(DATA_TYPE_IS_FLOAT)"),
                    datasets: str = typer.Option(",".join(DEFAULT_VISIBLE), help="C, PolyBench: the datasets shown "
                                                 "(MINI and an odd size are added hidden)"),
                    replace: bool = typer.Option(False, "--replace", help="replace a problem imported before under "
                                                 "the same name (its runs then refer to the new one)")) -> None:
    """Import a KernelBench checkout/level folder, one KernelBench file, a C program (.c) or a folder of them
    (a PolyBench checkout), or a problem folder.

    Each KernelBench file runs forward once per configuration, each C program once per configuration up to
    its kernel, sandboxed; exits 1 if any file was rejected or the path holds no problem. A problem imported
    before is left as it is unless --replace."""
    options = ImportOptions(includes=tuple(include), entry=entry, sizes=_pairs(size, "--size"), defines=tuple(define),
                            datasets=tuple(d.strip().upper() for d in datasets.split(",") if d.strip()))
    with console.status(f"importing {path} …"):
        report = import_path(path, timeout_s=timeout, memory_mb=memory_mb, c_options=options, replace=replace)
    for problem in report.imported:
        console.print(f"[green]imported[/green] {problem.slug} ({len(problem.configs)} configurations, "
                      f"{len(problem.hidden_configs)} hidden) into {problem.folder}")
    for note in report.notes:
        console.print(f"[yellow]note[/yellow] {note}")
    for warning in report.warnings:
        console.print(f"[red]warning[/red] {escape(warning)}")
    for error in report.errors:
        console.print(f"[red]{'nothing to import' if error.cause == NO_PROBLEM else 'rejected'}[/red] {error}")
    if report.imported or len(report.errors) != 1 or report.errors[0].cause != NO_PROBLEM:
        console.print(f"{len(report.imported)} imported, {len(report.errors)} rejected.")
    if report.existing:
        console.print(f"{', '.join(report.existing)} {'was' if len(report.existing) == 1 else 'were'} imported "
                      "before: import again with --replace to overwrite.")
    if report.errors:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(problems_app, name="problems")
