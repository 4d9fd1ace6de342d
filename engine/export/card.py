"""The dataset card: a README.md with the Hugging Face YAML header (so `load_dataset(folder)` finds
the files), then what the rows are, counted from the rows themselves (by source, device, target,
language, problem), the rules that made them with their parameters, the schema, how to load them
with `datasets` and hand them to TRL, versions and filters. `export.json` holds the same facts for
programs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import pyarrow as pa

from engine.export.schemas import COLUMN_DOCS, SCHEMAS
from engine.rank.comparable import ALPHA
from engine.rank.pairs import MIN_RATIO, PairConfig
from engine.rank.pooled import PRIOR_DF, PRIOR_SPREAD_CPU, PRIOR_SPREAD_GPU

TARGET_WORDS = {"cuda": "CUDA kernels for the GPU", "c-cpu": "C functions for the CPU"}
PURPOSE = {
    "preferences": "For reward-model and DPO training: each row is a `prompt` with a `chosen` and a "
                   "`rejected` answer to it.",
    "ranked": "Each problem's candidates in Bradley–Terry order within their target, with their "
              "measurements and reward components.",
    "trajectories": "Multi-turn refinement conversations (prompt, reply, feedback) with per-turn rewards, "
                    "anchored and discounted returns. For multi-turn RL.",
    "candidates": "Every candidate with every measured field, flat.",
}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def _what(kind: str, tallies: dict[str, dict[str, int]]) -> str:
    targets = tallies.get("target", {})
    held = ", ".join(f"{count} of {TARGET_WORDS.get(t, t)}" for t, count in targets.items()) or "no rows"
    unit = "pairs" if kind == "preferences" else "rows"
    return f"{PURPOSE[kind]} This export holds {unit}: {held}."


def pair_rules(config: PairConfig, min_agreement: float) -> list[str]:
    """The rules every pair (preferences, the ranked order's comparisons) obeys, with their parameters."""
    return [
        "Comparable candidates only: the same problem and the same target (a CUDA task's pairs are both CUDA; "
        "C code for the CPU is only ever paired with C code for the CPU, under the CPU task's prompt).",
        "The same code is one candidate: sources equal once comments and whitespace are gone (Python keeps "
        "its block structure) form one class, represented by its earliest candidate; no pair is made within it.",
        f"Measured pairs: both correct, timed on the same device model against the same baseline on the same "
        f"configuration. Identical code pools its evaluations (each one's median over its own run's baseline); "
        f"the pooled medians are at least {config.min_ratio:g}× apart (default {MIN_RATIO:g}) and the "
        f"difference holds against the spread between evaluations at level alpha = {config.alpha:g} (default "
        f"{ALPHA:g}): a z-test with that spread estimated from the codes measured several times in the same "
        f"context, pooled with a prior worth {PRIOR_DF:g} evaluations (log-scale sd {PRIOR_SPREAD_CPU:g} on a "
        f"CPU, {PRIOR_SPREAD_GPU:g} on a GPU). The trial noise inside one run is not evidence of a difference "
        "that survives re-measurement. `test`, `p_value`, `alpha`, the interval of the ratio and the "
        "evaluations pooled are on each row; the chosen side is always the faster pooled median; weight = "
        "|log ratio|.",
        f"Human pairs: a vote for A or B (ties, 'both bad' and skips say nothing about order and are dropped), "
        f"weighted by the labeler's agreement weight, kept at weight >= {min_agreement:g}; where both candidates "
        "were measured they share a device, baseline and configuration.",
        "Integrity pairs: a candidate caught cheating is `rejected` against every comparable honest candidate, "
        "whatever a vote or a timer said about it.",
        "Results flagged as implausible enter no row until a person clears them.",
        "Prompts never contain the problems' hidden input configurations.",
    ]


def _schema_lines(kind: str) -> list[str]:
    lines = []
    for name, schema in SCHEMAS[kind].items():
        lines += [f"`{name}`:", "", "| column | type | meaning |", "|---|---|---|"]
        lines += [f"| {field.name} | {_type(field.type)} | {COLUMN_DOCS.get(field.name, '')} |" for field in schema]
        lines.append("")
    return lines


def _type(kind: pa.DataType) -> str:
    return str(kind).replace("<", "&lt;").replace(">", "&gt;").replace("|", "/")


def _loading(kind: str, files: dict[str, str]) -> list[str]:
    first = next(iter(files))
    load = ["```python", "from datasets import load_dataset", "",
            f'rows = load_dataset("path/to/this/folder", "{first}", split="train")']
    if kind == "preferences":
        load += ['conversation = load_dataset("path/to/this/folder", "conversational", split="train")', "",
                 "# TRL: `standard` is TRL's standard preference format, `conversational` its conversational one",
                 "from trl import DPOConfig, DPOTrainer", "",
                 'trainer = DPOTrainer(model=model, args=DPOConfig(output_dir="dpo"), train_dataset=conversation,',
                 "                     processing_class=tokenizer)",
                 "# a reward model: trl.RewardTrainer takes the same rows (its implicit-prompt format is also fine)",
                 "# keep one target per run: rows.filter(lambda r: r['target'] == 'cuda')"]
    elif kind == "trajectories":
        load += ["", "# `messages` is a conversation: trl.SFTTrainer takes it as is; per-turn rewards for RL",
                 'sft = rows.select_columns(["messages"])']
    else:
        load += ["", "# one (problem, target) group at a time; speedups compare only within one device and baseline",
                 "cuda = rows.filter(lambda r: r['target'] == 'cuda')"]
    return [*load, "```"]


def card_text(kind: str, files: dict[str, str], counts: dict[str, int], tallies: dict[str, dict[str, int]],
              filters: dict, rules: list[str]) -> str:
    configs = "\n".join(f"- config_name: {name}\n  data_files:\n  - split: train\n    path: {path}"
                        for name, path in files.items())
    body = ["---", "configs:", configs, "tags:", "- cuda", "- gpu-kernels", "- code", "---", "",
            f"# Kernel Refinery export: {kind}", "", _what(kind, tallies), "",
            "## Counts", "", *[f"- `{name}`: {count} rows" for name, count in counts.items()], ""]
    first = next(iter(files))
    for key, counter in tallies.items():
        body += [f"### By {key} (`{first}`)", "", f"| {key} | rows |", "|---|---|",
                 *[f"| {value} | {count} |" for value, count in counter.items()], ""]
    if rules:
        body += ["## How the pairs were made", "", *[f"- {rule}" for rule in rules], ""]
    body += ["## Schema", "", *_schema_lines(kind), "## Loading", "", *_loading(kind, files), "",
             "## Versions", "", f"- kernel-refinery {_version('kernel-refinery')}", f"- torch {_version('torch')}",
             f"- exported {datetime.now(UTC).isoformat(timespec='seconds')}", "",
             "## Filters", "", "```json", json.dumps(filters, indent=2, default=str), "```", ""]
    return "\n".join(body)


def write_card(out_dir: Path, kind: str, files: dict[str, str], counts: dict[str, int],
               tallies: dict[str, dict[str, int]], filters: dict, rules: list[str]) -> Path:
    """README.md (the card) and export.json (the same facts, for programs)."""
    (out_dir / "export.json").write_text(json.dumps(
        {"kind": kind, "files": files, "counts": counts, "tallies": tallies, "rules": rules, "filters": filters,
         "columns": {name: schema.names for name, schema in SCHEMAS[kind].items()}}, indent=2, default=str))
    path = out_dir / "README.md"
    path.write_text(card_text(kind, files, counts, tallies, filters, rules))
    return path
