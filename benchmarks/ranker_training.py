"""Ranker training on 100k pairs must finish in <= 60 s on CPU.

Generates candidates with a known speed model (engine.rank.synthetic), keeps 100k measured pairs
on the training problems, and times the whole `train_on` (pairs, features, fit, held-out
evaluation, importance). A logistic regression on feature differences (Newton's method, numpy)
on the same training pairs is timed in the same run, so the printed ratio says how the ranker
compares with the simplest pairwise model on this machine, whatever its speed today.

    .venv/bin/python benchmarks/ranker_training.py [--pairs 100000] [--budget 60]

Exit status 1 when the budget is exceeded.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from engine.rank.features import feature_names, static_keys, vectorize
from engine.rank.metrics import pairwise_accuracy, sigmoid
from engine.rank.pairs import PairConfig, PairSet, build_pairs
from engine.rank.split import split_problems
from engine.rank.synthetic import SyntheticConfig, synthetic_evidence
from engine.rank.training import TrainConfig, train_on


def _evidence_for(pairs_wanted: int, seed: int) -> list:
    """Enough problems that the training side holds at least `pairs_wanted` measured pairs."""
    per_problem = 48  # 1128 pairs per problem before the 10 % margin
    problems = int(pairs_wanted / (0.75 * 0.75 * 1128 * 0.8)) + 2
    return synthetic_evidence(SyntheticConfig(problems=problems, candidates_per_problem=per_problem, seed=seed,
                                              incorrect_share=0.1))


def logistic_on_differences(x: np.ndarray, train: PairSet, test: PairSet, ridge: float = 1e-3,
                            iterations: int = 12) -> tuple[float, float]:
    """(seconds, held-out accuracy) of a ridge logistic regression on standardised x_a - x_b."""
    started = time.perf_counter()
    mean, std = x.mean(axis=0), x.std(axis=0)
    z = (x - mean) / np.where(std > 1e-6, std, 1.0)
    d = z[train.a] - z[train.b]
    y, w = train.target.astype(np.float64), train.weight.astype(np.float64)
    beta = np.zeros(d.shape[1])
    for _ in range(iterations):
        p = sigmoid(d @ beta)
        grad = d.T @ (w * (p - y)) + ridge * beta
        hessian = (d * (w * p * (1 - p))[:, None]).T @ d + ridge * np.eye(d.shape[1])
        step = np.linalg.solve(hessian, grad)
        beta -= step
        if np.max(np.abs(step)) < 1e-6:
            break
    seconds = time.perf_counter() - started
    p_test = sigmoid((z[test.a] - z[test.b]) @ beta)
    return seconds, pairwise_accuracy(p_test, test.target)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    evidence = _evidence_for(args.pairs, args.seed)
    problems = sorted({e.problem_slug for e in evidence})
    train_problems, held = split_problems(problems, 0.25, args.seed)
    # keep whole training problems until they hold at least the requested number of pairs
    per_problem: dict[str, int] = {}
    for example in build_pairs(evidence, [], config=PairConfig(seed=args.seed)):
        per_problem[example.problem] = per_problem.get(example.problem, 0) + 1
    kept_train, total = [], 0
    for slug in train_problems:
        if total >= args.pairs:
            break
        kept_train.append(slug)
        total += per_problem.get(slug, 0)
    if total < args.pairs:
        print(f"only {total} training pairs generated; raise the problem count", file=sys.stderr)
        return 2
    evidence = [e for e in evidence if e.problem_slug in set(held) | set(kept_train)]
    config = TrainConfig(heldout_problems=tuple(held), seed=args.seed, pairs=PairConfig(seed=args.seed))

    started = time.perf_counter()
    trained = train_on(evidence, [], config)
    ranker_seconds = time.perf_counter() - started
    counts = trained.data["pairs"]
    held_acc = trained.metrics["heldout"]["by_source"]["measured"]["accuracy"]

    by_id = {e.id: e for e in evidence}
    all_examples = build_pairs(evidence, [], config=PairConfig(seed=args.seed))
    ids = sorted({e.a for e in all_examples} | {e.b for e in all_examples})
    row_of = {cid: k for k, cid in enumerate(ids)}
    rows = [by_id[i] for i in ids]
    names = feature_names(static_keys(r.features for r in rows))
    x = vectorize(rows, names)
    lr_train = PairSet.from_examples([e for e in all_examples if e.problem in set(kept_train)], row_of)
    lr_test = PairSet.from_examples([e for e in all_examples if e.problem in set(held)], row_of)
    lr_seconds, lr_acc = logistic_on_differences(x, lr_train, lr_test)

    print(f"training pairs: {counts['train']}  held-out pairs: {counts['heldout']}")
    print(f"ranker (train_on, whole pipeline): {ranker_seconds:.1f} s, fit {trained.metrics['fit_seconds']:.1f} s, "
          f"{trained.metrics['steps']} steps; held-out accuracy on pairs >= 10 % apart {100 * held_acc:.1f} %")
    print(f"baseline (logistic regression on feature differences, fit only): {lr_seconds:.2f} s; "
          f"held-out accuracy {100 * lr_acc:.1f} %")
    print(f"ratio ranker / baseline time: {ranker_seconds / lr_seconds:.1f}x; budget {args.budget:.0f} s: "
          f"{'OK' if ranker_seconds <= args.budget else 'EXCEEDED'}")
    return 0 if ranker_seconds <= args.budget else 1


if __name__ == "__main__":
    sys.exit(main())
