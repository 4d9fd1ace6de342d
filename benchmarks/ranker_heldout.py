"""Held-out pairwise accuracy of the ranker on real measured candidates, cross-validated by problem.

One held-out split of a few dozen problems swings by luck, so every problem is held out once: the
problems with measured pairs are dealt into `--folds` groups (seeded), a ranker is trained on the
others each time, and the held-out pairs of all folds are pooled. Printed beside it, on the same
pooled pairs: random, "fewer registers wins", "higher occupancy wins". Reads the database of the
settings (load recordings first: `refinery runs load-recorded`).

    REFINERY_HOME=/tmp/rk .venv/bin/python benchmarks/ranker_heldout.py [--folds 5] [--seeds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TARGET = 0.85


def deal(problems: list[str], folds: int, seed: int) -> list[list[str]]:
    shuffled = sorted(problems)
    random.Random(seed).shuffle(shuffled)
    return [shuffled[i::folds] for i in range(folds) if shuffled[i::folds]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seeds", type=int, default=3, help="repetitions with another dealing of the problems")
    parser.add_argument("--min-ratio", type=float, default=1.10, help="measured pairs at least this far apart")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from db.labels import list_labels, load_evidence
    from engine.rank.pairs import PairConfig, build_pairs
    from engine.rank.training import TrainConfig, train_on
    from engine.store.database import use_settings_database

    use_settings_database()
    evidence, labels = load_evidence(), list_labels()
    pairs_config = PairConfig(min_ratio=args.min_ratio, use_human=False, use_measured=True)
    problems = sorted({e.problem for e in build_pairs(evidence, labels, None, pairs_config)})
    devices = sorted({e.device for e in evidence if e.device})
    print(f"{len(evidence)} candidates, {len(problems)} problems with measured pairs >= {args.min_ratio:.2f}x apart, "
          f"devices {devices}")
    pooled: dict[str, list[float]] = {}  # name -> [correct, total]
    folds_done = []
    for seed in range(args.seeds):
        for group in deal(problems, args.folds, seed):
            model = train_on(evidence, labels, TrainConfig(pairs=pairs_config, heldout_problems=tuple(group),
                                                           seed=seed))
            held = model.metrics["heldout"] or {}
            block = held.get("by_source", {}).get("measured")
            if not block:
                continue
            n = block["pairs"]
            entries = {"ranker": block["accuracy"],
                       **{name: acc.get("measured") for name, acc in held.get("baselines", {}).items()}}
            for name, accuracy in entries.items():
                if accuracy is None:
                    continue
                tally = pooled.setdefault(name, [0.0, 0.0])
                tally[0] += accuracy * n
                tally[1] += n
            folds_done.append({"seed": seed, "heldout": group, "pairs": n, "accuracy": block["accuracy"],
                               "auc": block.get("auc")})
            print(f"seed {seed} held out {len(group):2d} problems: {n:4d} pairs, ranker {block['accuracy']:.1%}")
    summary = {name: {"accuracy": c / t, "pairs": int(t)} for name, (c, t) in pooled.items() if t}
    print("\npooled held-out accuracy on measured pairs (every problem held out once per seed):")
    for name, entry in sorted(summary.items(), key=lambda kv: -kv[1]["accuracy"]):
        print(f"  {name:20s} {entry['accuracy']:.1%}  ({entry['pairs']} pairs)")
    ranker = summary.get("ranker", {}).get("accuracy")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "folds": folds_done, "devices": devices,
                                         "candidates": len(evidence), "problems": problems}, indent=2))
    if ranker is None:
        print("no held-out measured pair")
        return 1
    print(f"target {TARGET:.0%}: {'met' if ranker >= TARGET else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
