"""`refinery run` (in the foreground, with a live table) and `refinery runs list | show | resume | load-recorded`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import typer
from rich.console import Group
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table

from db import runs_repo
from engine.cli.output import JSON_OPTION, cli_console, print_json
from engine.runs.run import LLMOptions, RunExecutor, RunRequest, create_run, events_dir, reap_silent_runs
from engine.runs.usage import run_usage
from engine.search import STRATEGY_NAMES
from engine.settings import get_settings
from engine.verify.scale import choose_ray

console = cli_console()
RAY_OPTION = typer.Option(None, "--ray/--no-ray", help="verify through Ray workers (default: when RAY_ADDRESS is set)")
runs_app = typer.Typer(help="Inspect and resume runs.", no_args_is_help=True)


def _round_table(rows) -> Table:
    table = Table("step", "origin", "implementation / note", "verdict", "speedup", "reward", "feedback (top)")
    for row in rows[-25:]:
        candidate, evaluation, feedback = row.candidate, row.evaluation, row.feedback
        speed = f"{evaluation.speedup:.2f}×" if evaluation and evaluation.speedup else "-"
        reward = f"{evaluation.reward:+.3f}" if evaluation and evaluation.reward is not None else "-"
        lines = (feedback.text or "").splitlines() if feedback else []
        top = next((ln[3:] for ln in lines if ln[:3] == "1. "), lines[0] if lines else "")[:70]
        label = candidate.proposal.get("implementation") or candidate.proposal.get("model") or candidate.origin
        colour = "green" if evaluation and evaluation.verdict == "correct" else "yellow"
        table.add_row(f"{candidate.step}.{candidate.sample}", candidate.origin, str(label),
                      f"[{colour}]{evaluation.verdict if evaluation else '?'}[/{colour}]", speed, reward, top)
    return table


class _Progress:
    """The live view under the rounds table: what the run is doing now and how long the step has taken
    (rich renders it several times a second, so a long step shows its time ticking rather than a frozen
    header). The clock starts with the step, not with each message about it: a step whose samples arrive
    one by one says "sample 2 is in" without its time going back to 0 s."""

    def __init__(self) -> None:
        self.text, self.since = "starting", time.monotonic()
        self.spinner = Spinner("dots")

    def set(self, text: str) -> None:
        self.text = text

    def step_stored(self) -> None:
        """The step ended; the next one starts now."""
        self.since = time.monotonic()

    def __rich__(self):
        self.spinner.text = f"{self.text} ({time.monotonic() - self.since:.0f} s into the step)"
        return self.spinner


def _execute_live(run_id: int) -> str:
    progress = _Progress()
    table: list = [Table()]

    def view() -> Group:
        return Group(table[0], progress)

    with Live(view(), console=console, refresh_per_second=4) as live:
        def show(step, items):
            progress.step_stored()
            table[0] = _round_table(runs_repo.tree_rows(run_id))
            live.update(view())

        executor = RunExecutor(run_id, on_step=show, on_phase=progress.set)
        table[0] = _round_table(runs_repo.tree_rows(run_id))
        live.console.print(f"run {run_id}: {executor.problem.slug} with {executor.request.proposer}/"
                           f"{executor.request.strategy} on {executor.pipeline.device_name}; events in "
                           f"{events_dir(run_id)}")
        try:
            status = executor.execute()
        finally:
            live.update(table[0])  # the spinner goes; the final table stays
    console.print()
    rows = runs_repo.tree_rows(run_id)
    best = max((r.evaluation.speedup or 0 for r in rows if r.evaluation and r.evaluation.verdict == "correct"),
               default=None)
    console.print(f"run {run_id} {status}: {len(rows)} candidates" + (f", best {best:.2f}×" if best else ""))
    ending = next((e for e in reversed(runs_repo.events(run_id)) if e.kind == status), None)
    if ending is not None and ending.message and status != "failed":
        console.print(f"  {ending.message}")
    usage = run_usage(run_id)
    if usage.calls:
        console.print(usage.describe())
    if status == "failed":
        run = runs_repo.get_run(run_id)
        console.print(f"[red]run {run_id} failed: {run.error if run else 'no cause stored'}[/red]")
    return status


def run_command(problem: str = typer.Option(..., "--problem", help="problem slug (refinery problems list)"),
                proposer: str = typer.Option("library", help="library | llm"),
                strategy: str = typer.Option("iterative", help=" | ".join(STRATEGY_NAMES)),
                rounds: int = typer.Option(10, min=1), samples: int = typer.Option(1, min=1, help="proposals per step"),
                seed: int = typer.Option(0), device: str = typer.Option("auto", help="auto | gpu | cpu"),
                base_url: str = typer.Option(None, help="OpenAI-compatible endpoint (llm)"),
                model: str = typer.Option(None, help="model name (llm)"),
                temperature: float = typer.Option(None), ray: bool = RAY_OPTION,
                profile: bool = typer.Option(True, "--profile/--no-profile",
                                             help="on a GPU: ncu and energy for each correct candidate"),
                conversation: bool = typer.Option(False, "--conversation/--single-turn",
                                                  help="llm: each round continues its path's conversation"),
                concurrency: int = typer.Option(4, min=1, help="llm: requests in flight at once to the endpoint"),
                max_tokens: int = typer.Option(8192, min=1, help="llm: the longest reply asked for"),
                stream: bool = typer.Option(True, "--stream/--no-stream", help="llm: stream replies"),
                extra_body: str = typer.Option(None, help="llm: JSON passed to the endpoint as is, e.g. "
                                                          "'{\"top_p\": 0.95}'")) -> None:
    """Run a refinement in this terminal, showing each step as it is stored."""
    choose_ray(ray)
    settings = get_settings()
    llm = None
    if proposer == "llm":
        try:
            body = json.loads(extra_body) if extra_body else None
        except json.JSONDecodeError as exc:
            console.print(f"[red]--extra-body is not JSON: {exc}[/red]")
            raise typer.Exit(2) from exc
        llm = LLMOptions(base_url or settings.llm_base_url, model or settings.llm_model, settings.llm_api_key_env,
                         settings.llm_temperature if temperature is None else temperature, concurrency=concurrency,
                         stream=stream, max_tokens=max_tokens, extra_body=body)
    try:
        run_id = create_run(RunRequest(problem, proposer, strategy, rounds, samples, seed, llm, device, profile,
                                       conversation))
    except (KeyError, ValueError) as exc:
        console.print(f"[red]{exc.args[0]}[/red]")
        raise typer.Exit(1) from exc
    if _execute_live(run_id) == "failed":
        raise typer.Exit(1)


@runs_app.command("list")
def list_command(limit: int = typer.Option(30, help="how many of the newest runs"),
                 as_json: bool = JSON_OPTION) -> None:
    """The newest runs with their status and steps done of their budget (a run whose process is gone is ended
    as failed first)."""
    reap_silent_runs()
    runs = runs_repo.list_runs(limit)
    done = runs_repo.steps_done([run.id for run in runs])
    records = [{"id": run.id, "problem": run.problem_slug, "proposer": run.proposer, "strategy": run.strategy,
                "status": run.status, "steps_done": done.get(run.id, 0), "steps_budget": run.rounds_budget,
                "created": run.created_at} for run in runs]
    if as_json:
        print_json(records)
        return
    table = Table("id", "problem", "proposer", "strategy", "status", "steps (done / budget)", "created")
    for r in records:
        table.add_row(str(r["id"]), r["problem"], r["proposer"], r["strategy"], r["status"],
                      f"{r['steps_done']} / {r['steps_budget']}", r["created"].strftime("%Y-%m-%d %H:%M"))
    console.print(table)


@runs_app.command("show")
def show_command(run_id: int) -> None:
    """One run: its status (a run whose process is gone is said to be), its error and its rounds."""
    reap_silent_runs()
    run = runs_repo.get_run(run_id)
    if run is None:
        console.print(f"[red]no run {run_id}[/red]")
        raise typer.Exit(1)
    console.print(f"run {run.id}: {run.problem_slug}, {run.proposer}/{run.strategy}, {run.status} on {run.device}")
    if run.error:
        console.print(f"[red]{run.error}[/red]")
    if (usage := run_usage(run_id)).calls:
        console.print(usage.describe())
    console.print(_round_table(runs_repo.tree_rows(run_id)))


@runs_app.command("resume")
def resume_command(run_id: int, ray: bool = RAY_OPTION) -> None:
    """Continue a stopped, failed or killed run from its last stored step."""
    choose_ray(ray)
    if runs_repo.get_run(run_id) is None:
        console.print(f"[red]no run {run_id}[/red]")
        raise typer.Exit(1)
    if _execute_live(run_id) == "failed":
        raise typer.Exit(1)


@runs_app.command("load-recorded")
def load_recorded_command(folder: Path = typer.Argument(None, help="folder of recordings (default: the shipped ones)"),
                          ) -> None:
    """Load recorded GPU runs (the shipped ones by default) into this database, so a machine with no GPU
    can label, rank and export real measurements; runs already loaded are skipped."""
    from engine.store.recorded import load_recorded

    loaded = load_recorded(folder)
    console.print(f"loaded {loaded} recorded run(s)" if loaded else "every recording here is loaded already")


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.add_typer(runs_app, name="runs")
