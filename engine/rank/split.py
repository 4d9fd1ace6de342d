"""Held-out problems: a ranker is judged on problems it never saw, not on unseen pairs of seen ones.

Pairs of one problem share candidates, code and a problem-specific speed scale; splitting by pair
leaks all of that into the test set and flatters the model. The split ranks problems by a seeded
hash of the slug, so it is deterministic, independent of load order, and adding one problem
moves at most one other across the line.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable


def _key(slug: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{slug}".encode()).hexdigest()


def split_problems(slugs: Iterable[str], holdout_share: float = 0.25, seed: int = 0) -> tuple[list[str], list[str]]:
    """(train, held-out) problem slugs; with two or more problems both sides get at least one."""
    unique = sorted(set(slugs))
    if len(unique) < 2 or holdout_share <= 0:
        return unique, []
    k = min(len(unique) - 1, max(1, math.ceil(holdout_share * len(unique))))
    ranked = sorted(unique, key=lambda s: _key(s, seed))
    held = sorted(ranked[:k])
    return sorted(set(unique) - set(held)), held
