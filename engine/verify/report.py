"""An EvaluationResult as rich renderables: the verdict, per-configuration correctness, integrity checks,
timings against the baselines, kernels the profiler saw, and the log tail when something failed."""

from __future__ import annotations

from rich.console import Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from engine.schema.verdict import EvaluationResult, TimingStats, Verdict

VERDICT_STYLE = {
    Verdict.CORRECT: "bold green", Verdict.NEEDS_GPU: "bold yellow", Verdict.INCORRECT: "bold red",
    Verdict.INTEGRITY_VIOLATION: "bold magenta", Verdict.COMPILE_ERROR: "bold red", Verdict.LOAD_ERROR: "bold red",
    Verdict.RUNTIME_ERROR: "bold red", Verdict.TIMEOUT: "bold red",
}
LOG_LINES = 40


def _us(stats: TimingStats | None) -> str:
    if stats is None:
        return "-"
    return f"{stats.median_us:,.1f} µs ± {stats.iqr_us:,.1f} (n={stats.trials})"


def _err(value: float | None) -> str:
    return "-" if value is None else f"{value:.2e}"


def summary(result: EvaluationResult) -> Text:
    text = Text()
    text.append(f"{result.verdict}", style=VERDICT_STYLE.get(result.verdict, "bold"))
    text.append(f"  {result.message}")
    if result.flagged:
        text.append(f"\nflagged for review: {result.flag_reason}", style="bold yellow")
    return text


def configs_table(result: EvaluationResult) -> Table:
    table = Table("configuration", "hidden", "ok", "max abs err", "max rel err", "first mismatch / message",
                  title="correctness", title_justify="left")
    for c in result.configs:
        detail = c.first_mismatch or c.message or ""
        table.add_row(c.name, "yes" if c.hidden else "", "[green]✓[/green]" if c.ok else "[red]✗[/red]",
                      _err(c.max_abs_error), _err(c.max_rel_error), detail[:120])
    return table


def timing_table(result: EvaluationResult) -> Table | None:
    timed = next((c for c in result.configs if c.candidate is not None and c.name == result.timed_config),
                 next((c for c in result.configs if c.candidate is not None), None))
    if timed is None:
        return None
    table = Table("what", "median ± IQR", "wall (synced)", "vs candidate", title=f"timing on {timed.name!r}",
                  title_justify="left")
    table.add_row("candidate", _us(timed.candidate),
                  f"{timed.candidate.wall_us:,.1f} µs" if timed.candidate.wall_us else "-", "1.00×")
    for name, stats in timed.baselines.items():
        ratio = stats.median_us / timed.candidate.median_us if timed.candidate.median_us else 0.0
        table.add_row(name, _us(stats), f"{stats.wall_us:,.1f} µs" if stats.wall_us else "-", f"{ratio:.2f}×")
    return table


def other_timings_table(result: EvaluationResult) -> Table | None:
    """The other configurations timed (`--all-configs`): shown beside the headline, which stays the timed one."""
    others = [c for c in result.configs if c.candidate is not None and c.name != result.timed_config]
    if not others:
        return None
    table = Table("configuration", "candidate", *(others[0].baselines or {}), "speedup",
                  title="other configurations timed", title_justify="left")
    for c in others:
        first = next(iter(c.baselines.values()), None)
        speedup = first.median_us / c.candidate.median_us if first and c.candidate.median_us else None
        table.add_row(c.name, _us(c.candidate), *(_us(s) for s in c.baselines.values()),
                      f"{speedup:.2f}×" if speedup else "-")
    return table


def integrity_table(result: EvaluationResult) -> Table:
    table = Table("check", "result", "detail", title="integrity", title_justify="left")
    for f in result.integrity:
        table.add_row(f.check, "[green]pass[/green]" if f.passed else "[red]FAIL[/red]", f.detail[:140])
    return table


def kernels_table(result: EvaluationResult) -> Table | None:
    if not result.kernels:
        return None
    table = Table("kernel", "own", "calls", "GPU µs", "share", title="kernels launched", title_justify="left")
    for k in result.kernels[:12]:
        table.add_row(k.name[:70], "yes" if k.own else "", str(k.calls), f"{k.total_us:,.1f}", f"{k.share:.0%}")
    return table


def render(result: EvaluationResult, verbose: bool = False) -> Group:
    parts: list = [summary(result)]
    facts = []
    if result.device:
        facts.append(f"device {result.device}")
    if result.build_seconds is not None:
        facts.append(f"build {result.build_seconds:.2f} s")
    if result.load_seconds is not None:
        facts.append(f"load+first call {result.load_seconds:.2f} s")
    if result.speedup is not None:
        facts.append(f"speedup {result.speedup:.2f}× vs {result.baseline_name}")
    if facts:
        parts.append(Text(" · ".join(facts), style="dim"))
    if result.configs:
        parts.append(configs_table(result))
    for table in (timing_table(result), other_timings_table(result), kernels_table(result)):
        if table is not None:
            parts.append(table)
    if result.integrity:
        parts.append(integrity_table(result))
    for note in result.notes:
        parts.append(Text(f"note: {note}", style="yellow"))
    if result.log and (verbose or result.verdict.is_failure):
        lines = result.log.strip().splitlines()
        shown = lines if verbose else lines[-LOG_LINES:]
        parts.append(Panel("\n".join(shown), title="log" if verbose else f"log (last {len(shown)} lines)",
                           border_style="dim"))
    if result.seeds:
        parts.append(Text(f"seeds: {', '.join(str(s) for s in result.seeds[:6])}"
                          f"{' …' if len(result.seeds) > 6 else ''}", style="dim"))
    return Group(*parts)
