"""`refinery device ceilings`: the built-in roofline table, and on a GPU the measured ceilings stored;
`refinery analyze FILE.cu`: the static report of any CUDA file (`engine.cli.analyze`)."""

from __future__ import annotations

import typer
from rich.table import Table

from engine.analysis.profile import devices
from engine.cli.analyze import analyze
from engine.cli.output import cli_console

console = cli_console()
device_app = typer.Typer(help="GPU ceilings for the roofline.", no_args_is_help=True)


def _tera(value: float | None) -> str:
    return f"{value / 1e12:.1f}" if value else "-"


def builtin_table() -> Table:
    table = Table("GPU", "CC", "SMs", "L2 MiB", "DRAM TB/s", "FP64", "FP32", "TF32", "FP16/BF16", "FP8",
                  title="Built-in dense peaks (TFLOP/s)")
    for d in devices.BUILTIN:
        table.add_row(d.name, f"{d.cc[0]}.{d.cc[1]}", str(d.sms), f"{d.l2_bytes / 2**20:.0f}",
                      f"{d.dram_bandwidth / 1e12:.3g}", _tera(d.peak("fp64")), _tera(d.peak("fp32")),
                      _tera(d.peak("tf32")), _tera(d.peak("fp16")), _tera(d.peak("fp8")))
    return table


def measured_table(entries: dict[str, devices.MeasuredCeilings]) -> Table:
    table = Table("GPU", "copy TB/s", "bf16", "fp16", "tf32", "fp32", "torch", title="Measured (TFLOP/s)")
    for name, m in entries.items():
        table.add_row(name, f"{m.dram_bandwidth / 1e12:.3g}", *(_tera(m.matmul.get(p)) for p in
                                                                ("bf16", "fp16", "tf32", "fp32")), m.torch_version)
    return table


@device_app.command("ceilings")
def ceilings(measure: bool = typer.Option(True, help="measure the present GPU (skipped where there is none)"),
             size: int = typer.Option(8192, help="matmul size for the FLOP/s measurement")) -> None:
    """Show the built-in table; on a GPU, measure copy bandwidth and matmul rates and store them."""
    console.print(builtin_table())
    name = devices.current_device_name()
    if name is None:
        console.print("No GPU here: showing the built-in table and stored measurements only.")
    else:
        entry = devices.match_device(name)
        console.print(f"Present GPU: [bold]{name}[/bold] → table entry: {entry.name if entry else 'none'}")
        if measure:
            with console.status("measuring copy bandwidth and matmul rates …"):
                measured = devices.measure_ceilings(matmul_size=size)
            path = devices.store_measured(measured)
            console.print(f"stored in {path}")
    stored = devices.load_measured()
    if stored:
        console.print(measured_table(stored))


def register(app: typer.Typer) -> None:
    app.add_typer(device_app, name="device")
    app.command("analyze")(analyze)
