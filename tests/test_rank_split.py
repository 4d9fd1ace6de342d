"""Held-out evaluation splits by problem, never by pair."""

from __future__ import annotations

from engine.rank.split import split_problems
from engine.rank.synthetic import SyntheticConfig, synthetic_evidence
from engine.rank.training import TrainConfig, train_on


def test_no_problem_is_on_both_sides_and_every_problem_is_on_one():
    slugs = [f"p{i}" for i in range(20)]
    train, held = split_problems(slugs, 0.25, seed=1)
    assert not set(train) & set(held) and set(train) | set(held) == set(slugs)
    assert len(held) == 5


def test_the_split_is_deterministic_and_independent_of_order():
    slugs = [f"p{i}" for i in range(10)]
    assert split_problems(slugs, 0.3, seed=2) == split_problems(list(reversed(slugs)), 0.3, seed=2)


def test_two_problems_give_one_on_each_side_and_one_problem_holds_nothing_out():
    train, held = split_problems(["a", "b"], 0.25)
    assert len(train) == len(held) == 1
    assert split_problems(["a"], 0.25) == (["a"], [])


def test_adding_a_problem_moves_at_most_one_existing_problem():
    base = [f"p{i}" for i in range(12)]
    _, held_before = split_problems(base, 0.25)
    _, held_after = split_problems(base + ["new"], 0.25)
    assert len(set(held_before) - set(held_after)) <= 1


def test_training_never_sees_a_pair_of_a_held_out_problem():
    evidence = synthetic_evidence(SyntheticConfig(problems=4, candidates_per_problem=6))
    trained = train_on(evidence, [], TrainConfig(fit=_tiny_fit()))
    held = set(trained.data["heldout_problems"])
    assert held and not held & set(trained.data["train_problems"])
    train_ids = {e.id for e in evidence if e.problem_slug in set(trained.data["train_problems"])}
    assert trained.data["candidates"] <= len(train_ids)


def _tiny_fit():
    from engine.rank.model import FitConfig

    return FitConfig(min_steps=20)
