"""Metrics of pairwise predictions: accuracy, AUC, calibration, and within-problem order.

A pair's orientation (which candidate is "a") is arbitrary, so AUC and calibration are computed
on the symmetrised set: every pair once as (p, y) and once as (1 - p, 1 - y). Accuracy counts a
prediction of exactly 0.5 (a baseline with no opinion) as half right, so "random" scores 50 %
whatever the pairs are.
"""

from __future__ import annotations

import math

import numpy as np


def _decisive(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keep = (y == 0.0) | (y == 1.0)
    return np.asarray(p, dtype=np.float64)[keep], np.asarray(y, dtype=np.float64)[keep]


def pairwise_accuracy(p: np.ndarray, y: np.ndarray) -> float:
    """Share of decisive pairs whose winner the prediction names; p == 0.5 earns half."""
    p, y = _decisive(p, y)
    if len(p) == 0:
        return math.nan
    credit = np.where(p == 0.5, 0.5, ((p > 0.5) == (y == 1.0)).astype(np.float64))
    return float(credit.mean())


def _symmetrise(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p, y = _decisive(p, y)
    return np.concatenate([p, 1.0 - p]), np.concatenate([y, 1.0 - y])


def _midranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of their positions."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    upper = np.cumsum(counts)
    return (upper - (counts - 1) / 2.0)[inverse].astype(np.float64)


def auc(p: np.ndarray, y: np.ndarray) -> float:
    """Area under the ROC curve of the symmetrised predictions (Mann–Whitney, ties as half)."""
    ps, ys = _symmetrise(p, y)
    n_pos = int((ys == 1.0).sum())
    n_neg = len(ys) - n_pos
    if n_pos == 0 or n_neg == 0:
        return math.nan
    ranks = _midranks(ps)
    return float((ranks[ys == 1.0].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def calibration(p: np.ndarray, y: np.ndarray, bins: int = 10) -> tuple[float, list[dict[str, float]]]:
    """Expected calibration error and the reliability bins (mean predicted, observed, count)."""
    ps, ys = _symmetrise(p, y)
    if len(ps) == 0:
        return math.nan, []
    index = np.minimum((ps * bins).astype(int), bins - 1)
    rows, ece = [], 0.0
    for k in range(bins):
        mask = index == k
        n = int(mask.sum())
        if n == 0:
            continue
        mean_p, observed = float(ps[mask].mean()), float(ys[mask].mean())
        ece += n / len(ps) * abs(mean_p - observed)
        rows.append({"bin": k, "predicted": mean_p, "observed": observed, "count": n})
    return float(ece), rows


def brier(p: np.ndarray, y: np.ndarray) -> float:
    p, y = _decisive(p, y)
    return float(np.mean((p - y) ** 2)) if len(p) else math.nan


def kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b between two orderings of the same items."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    n = len(x)
    if n < 2:
        return math.nan
    i, j = np.triu_indices(n, k=1)
    dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    concordant_minus_discordant = float((dx * dy).sum())
    denominator = math.sqrt(float((dx != 0).sum()) * float((dy != 0).sum()))
    return concordant_minus_discordant / denominator if denominator else math.nan


def summarise(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The standard block reported for one group of pairs."""
    ece, _ = calibration(p, y)
    decisive = int(((y == 0.0) | (y == 1.0)).sum())
    return {"pairs": decisive, "accuracy": pairwise_accuracy(p, y), "auc": auc(p, y), "ece": ece,
            "brier": brier(p, y)}


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -60, 60)))
