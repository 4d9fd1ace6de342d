"""Pairwise metrics: accuracy with no-opinion as half, symmetrised AUC and calibration, Kendall tau."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.rank.metrics import auc, calibration, kendall_tau, pairwise_accuracy


def test_accuracy_counts_a_prediction_of_one_half_as_half_right():
    assert pairwise_accuracy(np.array([0.9, 0.5, 0.2]), np.array([1.0, 1.0, 1.0])) == pytest.approx(0.5)


def test_accuracy_ignores_tie_targets():
    assert pairwise_accuracy(np.array([0.9, 0.1]), np.array([1.0, 0.5])) == 1.0


def test_auc_is_one_for_perfect_confidence_ordering_and_half_for_no_opinion():
    assert auc(np.array([0.9, 0.8, 0.3]), np.array([1.0, 1.0, 0.0])) == 1.0
    assert auc(np.full(4, 0.5), np.array([1.0, 0.0, 1.0, 0.0])) == 0.5


def test_auc_does_not_depend_on_which_candidate_is_called_a():
    p, y = np.array([0.7, 0.4, 0.9]), np.array([1.0, 0.0, 0.0])
    assert auc(p, y) == pytest.approx(auc(1 - p, 1 - y))


def test_a_calibrated_predictor_has_near_zero_expected_calibration_error():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 20000)
    y = (rng.uniform(0, 1, 20000) < p).astype(float)
    ece, bins = calibration(p, y)
    assert ece < 0.02 and sum(b["count"] for b in bins) == 40000


def test_an_overconfident_predictor_has_a_large_calibration_error():
    y = np.array([1.0, 0.0] * 50)
    ece, _ = calibration(np.full(100, 0.99), y)
    assert ece > 0.4


def test_kendall_tau_of_identical_and_reversed_orders():
    assert kendall_tau(np.array([1, 2, 3]), np.array([10, 20, 30])) == 1.0
    assert kendall_tau(np.array([1, 2, 3]), np.array([3, 2, 1])) == -1.0
    assert math.isnan(kendall_tau(np.array([1.0]), np.array([1.0])))
