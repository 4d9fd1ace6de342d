"""How many exported measured pairs reverse when their two codes are measured again: the old rule (one
evaluation per code, a 1.1x margin and a Mann–Whitney test on that evaluation's trials) against the
pooled rule (`engine.rank.pooled`: identical code pooled, the difference judged against the spread
between evaluations).

Synthetic, on purpose: re-timing real CPU gemm candidates dozens of times takes hours on a shared
machine, so each evaluation is drawn from a noise model taken from the figures the issue measured on
the CPU host. One gemm code measured 16 times ranged 1.34–2.64× and another 1.26–3.15×, a range of
about 3.5 sd for 16 draws: a between-evaluation sd of ~0.22 on a log scale; one evaluation in
`--outlier-share` lands `--outlier` times faster (the 2.82× that re-measured at 1.80× and 1.83×).
Inside one evaluation the trials spread ±1 %, which is why the old test found p ≈ 1e-30 for any gap.

A pair *reverses* when the median of `--remeasure` fresh evaluations of each code orders them the other
way. That re-measurement has noise of its own, so a pair that is right (its codes' true order, which the
model knows) can still "reverse": the table says how many of the reversals were such pairs, and the honest
figure of an export's quality is the column of pairs against the true order. `remeasured_pairs_cpu.py`
makes the same count on real re-timing, where no true order is known. Codes' true speedups are spread over
`--true-range` (log-uniform).

    .venv/bin/python benchmarks/remeasured_pairs.py [--codes 12] [--evaluations 1 3 5] [--exports 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from db.labels import CandidateEvidence, Measurement
from engine.rank.pairs import measured_pairs

NOW = datetime(2026, 1, 1, tzinfo=UTC)
BASE_US = 1000.0


@dataclass(frozen=True)
class NoiseModel:
    between_sd: float = 0.22  # log-scale sd of one evaluation's median (issue: 1.34–2.64× over 16 runs)
    outlier_share: float = 0.05
    outlier: float = 1.55  # an outlier evaluation is this much faster (2.82 / 1.82)
    trial_spread: float = 0.01  # ± of the trials inside one evaluation


def draw_level(true_speedup: float, noise: NoiseModel, rng: np.random.Generator) -> float:
    """One evaluation's median time over its baseline's."""
    log_speedup = math.log(true_speedup) + rng.normal(0.0, noise.between_sd)
    if rng.random() < noise.outlier_share:
        log_speedup += math.log(noise.outlier)
    return math.exp(-log_speedup)


def _trials(level: float, spread: float, n: int = 50) -> tuple[float, ...]:
    return tuple(BASE_US * level * (1 + spread * (2 * k / (n - 1) - 1)) for k in range(n))


def evidence(levels: dict[int, list[float]], noise: NoiseModel, pooled: bool) -> list[CandidateEvidence]:
    """One candidate per code. Pooled: every evaluation's level kept; old rule: only the latest, with its
    trials (what the Mann–Whitney test saw)."""
    out = []
    for code, drawn in levels.items():
        latest = drawn[-1]
        m = Measurement("cpu", BASE_US * latest, 1 / latest, baseline="c-reference", config="medium",
                        baseline_us=BASE_US, samples_us=_trials(latest, noise.trial_spread), trials=50,
                        levels=tuple(drawn) if pooled else (latest,))
        out.append(CandidateEvidence(id=code, problem_slug="gemm", language="c", origin="library", strategy=None,
                                     source=f"/* {code} */", source_hash=str(code), created_at=NOW,
                                     measurements=(m,), equivalence=f"code-{code}"))
    return out


def old_rule_pairs(levels: dict[int, list[float]], noise: NoiseModel, min_ratio: float = 1.1,
                   alpha: float = 0.01) -> list[tuple[int, int]]:
    """(faster, slower) as the old export made them: the latest evaluation each, a 1.1x margin, and a
    Mann–Whitney U test on the two evaluations' trials."""
    from scipy.stats import mannwhitneyu

    latest = {code: drawn[-1] for code, drawn in levels.items()}
    out = []
    codes = sorted(latest)
    for i, a in enumerate(codes):
        for b in codes[i + 1:]:
            ratio = latest[b] / latest[a]
            if abs(math.log(ratio)) < math.log(min_ratio) - 1e-12:
                continue
            p = mannwhitneyu(_trials(latest[a], noise.trial_spread), _trials(latest[b], noise.trial_spread)).pvalue
            if p < alpha:
                out.append((a, b) if ratio > 1 else (b, a))
    return out


def new_rule_pairs(levels: dict[int, list[float]], noise: NoiseModel) -> list[tuple[int, int]]:
    pairs = measured_pairs(evidence(levels, noise, pooled=True))
    return [(p.b, p.a) if p.target == 0.0 else (p.a, p.b) for p in pairs]


def reversed_pairs(pairs: list[tuple[int, int]], truth: dict[int, float], noise: NoiseModel, remeasure: int,
                   rng: np.random.Generator) -> list[tuple[int, int]]:
    """The pairs whose order the median of `remeasure` fresh evaluations per code contradicts."""
    fresh = {code: float(np.median([draw_level(s, noise, rng) for _ in range(remeasure)]))
             for code, s in truth.items()}
    return [(faster, slower) for faster, slower in pairs if fresh[faster] > fresh[slower]]


def simulate(evaluations: int, exports: int, codes: int = 12, remeasure: int = 5,
             true_range: tuple[float, float] = (0.8, 3.0), seed: int = 0,
             noise: NoiseModel = NoiseModel()) -> dict[str, tuple[int, int, int, int]]:
    """Per rule: (pairs made, pairs reversed on re-measurement, pairs against the true order, reversed pairs
    that were right: reversed by the re-measurement's own noise), summed over `exports` simulated exports."""
    rng = np.random.default_rng(seed)
    tallies = {"old": [0, 0, 0, 0], "pooled": [0, 0, 0, 0]}
    for _ in range(exports):
        low, high = np.log(true_range)
        truth = {code: float(np.exp(rng.uniform(low, high))) for code in range(1, codes + 1)}
        levels = {code: [draw_level(s, noise, rng) for _ in range(evaluations)] for code, s in truth.items()}
        for rule, pairs in (("old", old_rule_pairs(levels, noise)), ("pooled", new_rule_pairs(levels, noise))):
            flipped = reversed_pairs(pairs, truth, noise, remeasure, rng)
            tallies[rule][0] += len(pairs)
            tallies[rule][1] += len(flipped)
            tallies[rule][2] += sum(truth[faster] < truth[slower] for faster, slower in pairs)
            tallies[rule][3] += sum(truth[faster] > truth[slower] for faster, slower in flipped)
    return {rule: tuple(tally) for rule, tally in tallies.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--codes", type=int, default=12)
    parser.add_argument("--evaluations", type=int, nargs="+", default=[1, 3, 5],
                        help="evaluations per code before export (pooled rule); the old rule uses the latest")
    parser.add_argument("--remeasure", type=int, default=5)
    parser.add_argument("--exports", type=int, default=100, help="simulated exports per setting")
    parser.add_argument("--true-range", type=float, nargs=2, default=[0.8, 3.0])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    noise = NoiseModel()
    print(f"noise: between-evaluation sd {noise.between_sd} (log), outliers {noise.outlier_share:.0%} at "
          f"×{noise.outlier}; {args.codes} codes, true speedups {args.true_range[0]}–{args.true_range[1]}×; "
          f"re-measured {args.remeasure} times; {args.exports} exports per row")
    print("| evaluations per code | rule | pairs per export | against the true order | reversed on a noisy "
          "re-measurement | of which right (the re-measurement's noise) |")
    print("|---|---|---|---|---|---|")
    for evaluations in args.evaluations:
        tallies = simulate(evaluations, args.exports, args.codes, args.remeasure, tuple(args.true_range), args.seed)
        for rule, (made, flipped, wrong, right) in tallies.items():
            share = f"{flipped / made:.1%} ({flipped}/{made})" if made else "no pairs"
            truly = f"{wrong / made:.1%} ({wrong}/{made})" if made else "–"
            print(f"| {evaluations} | {rule} | {made / args.exports:.1f} | {truly} | {share} | {right} |")


if __name__ == "__main__":
    main()
