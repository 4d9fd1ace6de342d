"""`refinery rank train | eval | list | order SLUG` and `refinery labels agreement`.

Heavy imports (torch) happen inside the commands, so `refinery --help` stays fast.
"""

from __future__ import annotations

import json
import math
from typing import Any

import typer
from rich.table import Table

from engine.cli.output import JSON_OPTION, cli_console, print_json

console = cli_console()
rank_app = typer.Typer(help="Train, evaluate and list the pairwise rankers.", no_args_is_help=True)
labels_app = typer.Typer(help="Pair labels: agreement between labelers and with measurement.", no_args_is_help=True)


def _pct(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{100 * value:.1f} %"


def _num(value: Any, digits: int = 3) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


ALL_PAIRS = "all (measured + human)"


def _print_report(report: dict | None, title: str) -> None:
    if not report:
        console.print(f"[yellow]{title}: no held-out problem (train on two or more problems to get one)[/yellow]")
        return
    table = Table("pairs", "n", "ranker acc", "AUC", "ECE", "random", "fewer registers", "higher occupancy",
                  "measured oracle", title=title)
    baselines = report.get("baselines", {})
    for source in ("measured", "human", "integrity"):
        block = report.get("by_source", {}).get(source)
        if not block:
            continue
        table.add_row(source + (" (>= margin apart)" if source == "measured" else ""), str(block["pairs"]),
                      _pct(block["accuracy"]), _num(block["auc"]), _num(block["ece"]),
                      *(_pct(baselines.get(name, {}).get(source)) for name in
                        ("random", "fewer_registers", "higher_occupancy", "measured_oracle")))
    ranked = report.get("all")
    if ranked and ranked.get("pairs"):
        # the block the dashboard's headline AUC is read from: one number, one pair set, on both sides
        table.add_row(ALL_PAIRS, str(ranked["pairs"]), _pct(ranked["accuracy"]), _num(ranked["auc"]),
                      _num(report.get("ece")), *("-" * 4))
    console.print(table)
    oracle = baselines.get("measured_oracle", {})
    if oracle.get("human_covered_pairs"):
        console.print(f"on the {oracle['human_covered_pairs']} human pairs with a measurement: ranker "
                      f"{_pct(oracle.get('ranker_on_covered'))}, stopwatch {_pct(oracle.get('human'))} "
                      "agreement with the labelers")
    within = report.get("within_problem", {})
    if within.get("problems"):
        console.print(f"within problem ({within['problems']}): Kendall tau {_num(within['kendall_tau'])}, "
                      f"top-1 recovery {_pct(within['top1'])}")


@rank_app.command("train")
def train_command(
    holdout: float = typer.Option(0.25, help="share of problems held out from training"),
    seed: int = typer.Option(0, help="seed of the problem split and the fit"),
    min_ratio: float = typer.Option(1.10, help="measured pairs must be at least this far apart in time"),
    human: bool = typer.Option(True, help="train on human votes"),
    measured: bool = typer.Option(True, help="train on measured pairs"),
    epochs: int = typer.Option(None, help="epochs (default: enough for 400 updates)"),
    refit_all: bool = typer.Option(False, help="after evaluating, refit on every problem and store that model"),
    as_json: bool = typer.Option(False, "--json", help="print the stored metrics as JSON"),
) -> None:
    """Train a new ranker version on every candidate and vote in the database."""
    from engine.rank.model import FitConfig
    from engine.rank.pairs import PairConfig
    from engine.rank.training import NoTrainingData, TrainConfig, train

    config = TrainConfig(pairs=PairConfig(min_ratio=min_ratio, use_human=human, use_measured=measured, seed=seed),
                         fit=FitConfig(epochs=epochs, seed=seed), holdout_share=holdout, seed=seed,
                         refit_all=refit_all)
    try:
        with console.status("training …"):
            row = train(config)
    except NoTrainingData as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    if as_json:
        console.print_json(json.dumps({"version": row.version, "data": row.data, "metrics": row.metrics}))
        return
    pairs = row.data.get("pairs", {})
    console.print(f"[green]ranker v{row.version}[/green] stored at {row.path}: trained on "
                  f"{len(row.data.get('train_problems', []))} problems {pairs.get('train')}, held out "
                  f"{len(row.data.get('heldout_problems', []))} {pairs.get('heldout')}; "
                  f"{row.metrics.get('train_seconds', 0):.1f} s")
    _print_report(row.metrics.get("heldout"), f"v{row.version} on held-out problems")


@rank_app.command("eval")
def eval_command(
    version: int = typer.Option(None, help="version to evaluate (default: the newest)"),
    problem: list[str] = typer.Option(None, help="evaluate on these problems instead of the held-out ones"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Evaluate a stored version on today's data for the problems it held out."""
    from engine.rank.store import clean_json
    from engine.rank.training import NoTrainingData, evaluate_version

    try:
        report = evaluate_version(version, problem or None)
    except (LookupError, ValueError, NoTrainingData) as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    if as_json:
        console.print_json(json.dumps(clean_json(report)))
        return
    if report.get("refit_all") and not problem:
        console.print("[yellow]this version was refit on every problem after its held-out evaluation, so these "
                      "problems are in its training data: its stored held-out metrics (`rank list`, the Ranker "
                      "page) are the honest ones[/yellow]")
    _print_report(report, f"v{report['version']} on today's pairs of {len(report['problems'])} problem(s)")


@rank_app.command("list")
def list_command(as_json: bool = JSON_OPTION) -> None:
    """Every stored version with its data and held-out metrics."""
    from engine.rank.store import clean_json, list_rankers

    rows = list_rankers()
    if as_json:
        print_json([clean_json({"version": row.version, "created": row.created_at.isoformat(),
                                "features": len(row.feature_names), "data": row.data, "metrics": row.metrics})
                    for row in rows])
        return
    if not rows:
        console.print("no ranker trained yet: `refinery rank train`")
        return
    table = Table("version", "created", "features", "train pairs", "held-out problems", "measured acc",
                  "human acc", f"AUC, {ALL_PAIRS}", "ECE")
    for row in rows:
        held = row.metrics.get("heldout") or {}
        by_source = held.get("by_source", {})
        pairs = row.data.get("pairs", {}).get("train", {})
        table.add_row(f"v{row.version}", f"{row.created_at:%Y-%m-%d %H:%M}", str(len(row.feature_names)),
                      str(sum(pairs.values())), str(len(row.data.get("heldout_problems", []))),
                      _pct(by_source.get("measured", {}).get("accuracy")),
                      _pct(by_source.get("human", {}).get("accuracy")),
                      _num(held.get("all", {}).get("auc")), _num(held.get("ece")))
    console.print(table)


@rank_app.command("order")
def order_command(slug: str, limit: int = typer.Option(20, help="rows to show per target")) -> None:
    """Bradley–Terry order of a problem's candidates from votes and measured pairs, per target (CUDA, C on
    the CPU): candidates of different targets are never compared."""
    from engine.rank.bt import bradley_terry_orders

    orders = bradley_terry_orders(slug)
    if not orders:
        console.print(f"no compared candidates for {slug}")
        return
    for target, order in orders.items():
        table = Table("rank", "candidate", "strength", title=f"{slug}: {target}")
        for k, (cid, strength) in enumerate(order[:limit], start=1):
            table.add_row(str(k), str(cid), f"{strength:+.3f}")
        console.print(table)


@labels_app.command("agreement")
def agreement_command(as_json: bool = typer.Option(False, "--json")) -> None:
    """Cohen's kappa per labeler and overall on overlapping pairs, and agreement with measurement."""
    from engine.rank.agreement import agreement_report

    report = agreement_report()
    if as_json:
        console.print_json(json.dumps(report.to_json()))
        return
    table = Table("labeler", "votes", "overlap pairs", "kappa", "measured votes", "agrees with measurement",
                  "training weight")
    for row in report.labelers:
        table.add_row(row.name, str(row.votes), str(row.overlap_pairs), _num(row.kappa), str(row.measured_votes),
                      _pct(row.measured_agreement), _num(row.weight, 2))
    console.print(table)
    console.print(f"overall: kappa {_num(report.overall_kappa)} over {report.overlap_pairs} overlapping pairs "
                  f"({report.rating_pairs} rating pairs, raw agreement {_pct(report.raw_agreement)}); "
                  f"with measurement {_pct(report.measured_agreement)} of {report.measured_votes} votes; "
                  f"left side chosen in {_pct(report.left_share)} of A/B votes")
    if report.kappa_caveat:
        console.print(f"[yellow]kappa {report.kappa_caveat}[/yellow]")


def register(app: typer.Typer) -> None:
    app.add_typer(rank_app, name="rank")
    app.add_typer(labels_app, name="labels")
