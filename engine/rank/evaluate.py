"""Evaluation of one set of candidate scores on pairs, beside the baselines, in one JSON-able report.

Reported per source (measured pairs are all >= the margin apart, so their accuracy is the headline
"pairs >= 10 % apart" number), plus within-problem order: Kendall's tau between score and
measured speed, and top-1 recovery (does the highest score go to the fastest candidate?).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from db.labels import CandidateEvidence
from engine.rank.baselines import BASELINES
from engine.rank.metrics import calibration, kendall_tau, pairwise_accuracy, sigmoid, summarise
from engine.rank.pairs import PairSet


def _speed_by_row(rows: Sequence[CandidateEvidence], members: Sequence[int]) -> dict[int, float]:
    """-log(time) on the device most of `members` were timed on (higher is faster)."""
    devices = Counter(m.device for i in members for m in rows[i].measurements if m.candidate_us)
    if not devices:
        return {}
    device = devices.most_common(1)[0][0]
    out = {}
    for i in members:
        for m in rows[i].measurements:
            if m.device == device and m.candidate_us:
                out[i] = -math.log(m.candidate_us)
    return out


def within_problem(scores: np.ndarray, rows: Sequence[CandidateEvidence], pairs: PairSet) -> dict[str, float]:
    members: dict[str, set[int]] = defaultdict(set)
    for i, j, problem in zip(pairs.a, pairs.b, pairs.problem, strict=True):
        members[problem].update((int(i), int(j)))
    taus, top1 = [], []
    for problem_rows in members.values():
        speed = _speed_by_row(rows, sorted(problem_rows))
        if len(speed) < 2:
            continue
        ids = sorted(speed)
        s = np.array([scores[i] for i in ids])
        v = np.array([speed[i] for i in ids])
        tau = kendall_tau(s, v)
        if not math.isnan(tau):
            taus.append(tau)
        top1.append(float(ids[int(np.argmax(s))] == ids[int(np.argmax(v))]))
    return {"problems": len(top1), "kendall_tau": float(np.mean(taus)) if taus else math.nan,
            "top1": float(np.mean(top1)) if top1 else math.nan}


def evaluate_scores(scores: np.ndarray, rows: Sequence[CandidateEvidence], pairs: PairSet) -> dict:
    """Metrics of `scores` (one per row of `rows`) on `pairs`, with every baseline on the same pairs."""
    p = sigmoid(scores[pairs.a] - scores[pairs.b]) if len(pairs) else np.zeros(0)
    y = pairs.target.astype(np.float64)
    report: dict = {"by_source": {}, "baselines": {}}
    for source in ("measured", "human", "integrity"):
        mask = pairs.source == source
        if mask.any():
            report["by_source"][source] = summarise(p[mask], y[mask])
    ranked = (pairs.source == "measured") | (pairs.source == "human")
    report["all"] = summarise(p[ranked], y[ranked])
    report["ece"], report["calibration"] = calibration(p[ranked], y[ranked])
    human = pairs.source == "human"
    oracle = BASELINES["measured_oracle"](rows, pairs.subset(human)) if human.any() else np.zeros(0)
    for name, baseline in BASELINES.items():
        entry = {}
        if name != "measured_oracle":
            q = baseline(rows, pairs)
            for source in ("measured", "human"):
                mask = pairs.source == source
                if mask.any():
                    entry[source] = pairwise_accuracy(q[mask], y[mask])
        elif human.any():
            covered = oracle != 0.5
            entry["human"] = pairwise_accuracy(oracle, y[human])
            entry["human_covered_pairs"] = int(covered.sum())
            # the ranker on the very pairs the oracle could judge, for a like-for-like comparison
            entry["ranker_on_covered"] = pairwise_accuracy(p[human][covered], y[human][covered])
        report["baselines"][name] = entry
    report["within_problem"] = within_problem(scores, rows, pairs)
    return report
