"""The unified reward orders outcomes as the design says: cheats lowest, speed log-scaled."""

from __future__ import annotations

import math

import pytest

from engine.reward.score import anchored_rewards, discounted_returns, structural_score, tiered_reward, unified_reward

GOOD = {"coalescing_sectors_per_request": 4, "occupancy": 1.0, "spill_bytes": 0, "vector_width": 16}
BAD = {"coalescing_sectors_per_request": 32, "occupancy": 0.1, "spill_bytes": 128, "vector_width": 4}


def test_integrity_violation_scores_below_every_honest_failure():
    cheat = unified_reward("integrity_violation", 50.0).total
    for verdict in ("compile_error", "load_error", "runtime_error", "timeout", "incorrect", "proposal_error"):
        assert cheat < unified_reward(verdict, None).total


def test_speed_is_log_scaled_and_symmetric():
    assert unified_reward("correct", 2.0, weights=None).speed == pytest.approx(math.log(2))
    assert unified_reward("correct", 0.5).speed == pytest.approx(-math.log(2))


def test_structural_score_counts_only_for_correct_kernels():
    assert unified_reward("incorrect", None, features=GOOD).structural == 0.0
    assert unified_reward("correct", 1.0, features=GOOD).structural > unified_reward("correct", 1.0, BAD).structural


def test_structural_score_is_capped():
    assert structural_score(GOOD) <= 1.0


def test_tiered_reward_matches_the_open_environment_table():
    assert [tiered_reward("correct", s) for s in (0.9, 1.0, 1.2, 1.5, 2.0, 3.5)] == [-0.1, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert tiered_reward("compile_error", None) == -0.5 and tiered_reward("incorrect", None) == -0.3


def test_components_are_kept_apart():
    breakdown = unified_reward("correct", 2.0, features=GOOD, coverage=0.9, ranker_score=0.3)
    data = breakdown.to_json()
    assert {"speed", "structural", "coverage", "ranker", "tiered", "total"} <= set(data)
    assert data["total"] == pytest.approx(data["speed"] + 0.2 * data["structural"] + 0.1 * 0.9 + 0.2 * 0.3)


def test_anchored_rewards_credit_only_improvement_on_the_first_turn():
    assert anchored_rewards([0.5, 0.7, 0.4]) == pytest.approx([0.5, 0.2, -0.1])


def test_discounted_returns_flow_back_with_gamma():
    assert discounted_returns([0.0, 0.0, 1.0], gamma=0.4) == pytest.approx([0.16, 0.4, 1.0])
