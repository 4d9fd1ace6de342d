"""The dataset card: a README.md with the Hugging Face YAML header (so `load_dataset(folder)` finds
the files), then counts, sources, devices, versions and the filters used."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

DESCRIPTIONS = {
    "preferences": "Pairs of CUDA candidates for the same task: `chosen` beat `rejected` by a human label or by "
                   "measured speed (both correct, at least 10 % apart). For reward-model and DPO training.",
    "ranked": "Every candidate of each problem in Bradley–Terry order with its measurements and reward components.",
    "trajectories": "Multi-turn refinement conversations (prompt, reply, feedback) with per-turn rewards, anchored "
                    "and discounted returns. For multi-turn RL.",
    "candidates": "Every candidate with every measured field, flat.",
}


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def write_card(out_dir: Path, kind: str, files: dict[str, str], counts: dict[str, int], filters: dict,
               summary: dict) -> Path:
    configs = "\n".join(f"- config_name: {name}\n  data_files:\n  - split: train\n    path: {path}"
                        for name, path in files.items())
    body = [
        "---", "configs:", configs, "tags:", "- cuda", "- gpu-kernels", "- code", "---", "",
        f"# Kernel Refinery export: {kind}", "", DESCRIPTIONS[kind], "",
        "## Counts", "", *[f"- {name}: {count} rows" for name, count in counts.items()], "",
        "## Sources", "", *[f"- {k}: {v}" for k, v in summary.items()], "",
        "## Versions", "", f"- kernel-refinery {_version('kernel-refinery')}", f"- torch {_version('torch')}",
        f"- exported {datetime.now(UTC).isoformat(timespec='seconds')}", "",
        "## Filters", "", "```json", json.dumps(filters, indent=2, default=str), "```", "",
        "Hidden input configurations of the problems are never included in any prompt.", "",
    ]
    path = out_dir / "README.md"
    path.write_text("\n".join(body))
    return path
