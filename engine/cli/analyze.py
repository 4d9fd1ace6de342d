"""`refinery analyze FILE.cu`: the static report and the feedback of a run, for any CUDA file.

Exit status: 0 with a report (even when some sizes were unknown: the report says which), 1 when
the file does not compile or has no kernels, 2 when it is not CUDA or an option is malformed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Group
from rich.markup import escape
from rich.table import Table

from engine.cli.output import cli_console

if TYPE_CHECKING:  # the command line starts without the analysis stack; `analyze` imports it when it runs
    from engine.feedback.standalone import FileAnalysis

console = cli_console()


def _sizes_line(result: FileAnalysis) -> str:
    given = ", ".join(f"{k}={v}" for k, v in result.sizes.items())
    found = ", ".join(f"{k}={v}" for k, v in list(result.file_values.items())[:12])
    parts = [f"given {given}" if given else "none given", f"from the file {found}" if found else ""]
    return "Sizes: " + " · ".join(p for p in parts if p)


def _kernel_block(kernel, arch: str) -> Table:
    """One kernel as label/value lines: narrow terminals keep every number readable."""
    from engine.analysis import kernel_row, launch_text

    row = kernel_row(kernel, arch)
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column()
    table.add_row("resources", escape(f"{row['registers']} registers · spills {row['spills']} · shared memory "
                                      f"{row['shared memory']}"))
    launch = launch_text(kernel.launch) + (f"\n{kernel.launch.note}" if kernel.launch.note else "")
    table.add_row("launch", escape(launch))
    others = ", ".join(f"{a} {o.occupancy:.0%}" for a, o in kernel.occupancy.items() if a != arch.removesuffix("a"))
    table.add_row("occupancy", escape(f"{row['occupancy']}, limited by {row['limited by']}"
                                      + (f" · {others}" if others else "")))
    table.add_row("accesses", escape(f"coalescing {row['coalescing']} · shared banks {row['bank conflicts']}"))
    table.add_row("SASS", escape(row["SASS"]))
    return table


def _findings(result: FileAnalysis) -> list:
    diagnostics = result.diagnostics
    c = diagnostics.classification if diagnostics is not None else None
    title = f"Diagnosis — {c.bottleneck.label} ({c.reason})" if c is not None else "Diagnosis"
    if not result.findings:
        return [f"[bold]{escape(title)}[/bold]", "No problem found by the diagnostic tools."]
    lines = [f"[bold]{escape(title)}, most important first:[/bold]"]
    for number, f in enumerate(result.findings, start=1):
        where = f" — {f.kernel}" + (f", line {f.line}" if f.line else "") if f.kernel else ""
        lines.append(f"{number}. [bold]{escape(f.title)}[/bold]{escape(where)}  [dim]{escape(f.category)} · "
                     f"severity {f.severity:.2f}[/dim]")
        lines.append(f"   {escape(f.evidence)}")
        lines.append(f"   [green]Change:[/green] {escape(f.suggestion)}")
    return lines


def render(result: FileAnalysis) -> Group:
    """The report as the terminal shows it: sizes, kernels, launches and SASS, the model, the findings."""
    from engine.analysis import model_text

    static = result.static
    head = f"[bold]{escape(result.file)}[/bold] · {result.arch} · analysed in {static.seconds:.1f} s"
    if static.compile_seconds:
        head += f" (nvcc {static.compile_seconds:.1f} s)"
    parts: list = [head, escape(_sizes_line(result)), ""]
    for kernel in static.kernels:
        parts += [f"[bold cyan]{escape(kernel.name)}[/bold cyan]", _kernel_block(kernel, static.arch), ""]
    parts += [f"Model: {escape(model_text(static, result.bytes_origin, result.flops_origin))}", "",
              *_findings(result)]
    said = {f"{k.name}: {k.launch.note}" for k in static.kernels}
    notes = [n for n in static.notes + (result.diagnostics.notes if result.diagnostics else []) if n not in said]
    if notes:
        parts.append("[dim]Notes:\n" + "\n".join(f"- {escape(n)}" for n in dict.fromkeys(notes)) + "[/dim]")
    if message := result.sizes_message():
        parts.append(f"[yellow]{escape(message)}[/yellow]")
    return Group(*parts)


def analyze(file: Path = typer.Argument(..., exists=True, dir_okay=False, help="CUDA source (.cu), any program"),
            arch: str = typer.Option(None, help="GPU architecture to compile and model for (default: settings)"),
            size: list[str] = typer.Option(None, "--size", "-s", help="NAME=VALUE, repeatable: a size the file "
                                           "reads at run time (binds a #define, constant, host variable or "
                                           "parameter of that name)"),
            flops: str = typer.Option(None, help="FLOPs of one run, an expression over the sizes (e.g. 2*N*N*N)"),
            nbytes: str = typer.Option(None, "--bytes", help="minimum DRAM bytes of one run, an expression over "
                                       "the sizes (default: the cudaMemcpy sizes of the host code)"),
            as_json: bool = typer.Option(False, "--json", help="print the report as JSON")) -> None:
    """Static report and feedback for a CUDA file that is no problem's candidate: registers, spills, shared
    memory, occupancy, the launch read from host code, SASS highlights and the ranked findings. The file is
    compiled in the sandbox (cubin only), never run."""
    from engine.feedback.standalone import analyse_file, parse_sizes

    try:
        sizes = parse_sizes(size or [])
        with console.status(f"analysing {file.name} …"):
            result = analyse_file(file.read_bytes(), file.name, arch=arch, sizes=sizes, flops=flops, nbytes=nbytes)
    except ValueError as exc:
        console.print(f"[red]{escape(str(exc))}[/red]")
        raise typer.Exit(2) from exc
    except (OSError, RuntimeError) as exc:  # the compiler or the sandbox could not start
        console.print(f"[red]could not analyse {escape(file.name)}: {escape(str(exc))}[/red]")
        raise typer.Exit(1) from exc
    if as_json:
        print(json.dumps(result.to_json(), indent=1, default=str))
    elif result.error and not result.source_only:
        console.print(f"[red]{escape(result.error)}[/red]")
    else:
        if result.source_only:
            console.print(f"[yellow]{escape(result.source_only)}[/yellow]")
        console.print(render(result))
    if result.error:
        raise typer.Exit(2 if result.error_kind == "not-cuda" else 1)
