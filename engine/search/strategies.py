"""Search strategies: which candidates the next step expands.

A strategy only chooses parents; the proposer makes the children and the verifier scores them.
Every strategy first serves the retry buffer: when every candidate of the last step failed, the
next step refines those failures with their failure feedback (up to `max_retries` in a row).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass

from engine.search.tree import SearchTree

STRATEGY_NAMES = ("iterative", "best-of-n", "beam", "mcts")


@dataclass(frozen=True)
class SearchOptions:
    samples: int = 1  # proposals per step
    beam_width: int = 2
    exploration: float = 0.7  # UCT constant (rewards are log-scaled, about -1 … 2)
    widening_c: float = 1.0  # progressive widening: children <= c * visits ** alpha
    widening_alpha: float = 0.5
    max_retries: int = 2
    dead_end_patience: int = 3


class Strategy(ABC):
    name = "base"

    def __init__(self, options: SearchOptions | None = None) -> None:
        self.options = options or SearchOptions()

    def plan(self, tree: SearchTree) -> list[int | None]:
        """Parents (candidate ids; None = start from scratch) for the next step's proposals."""
        retry = self.retry_parents(tree)
        return retry if retry else self._plan(tree)

    def retry_parents(self, tree: SearchTree) -> list[int]:
        last = tree.step_nodes(tree.last_step())
        if not last or not all(n.failed for n in last):
            return []
        eligible = [n.candidate_id for n in last if tree.failure_streak(n.candidate_id) <= self.options.max_retries]
        return [eligible[i % len(eligible)] for i in range(self.options.samples)] if eligible else []

    @abstractmethod
    def _plan(self, tree: SearchTree) -> list[int | None]: ...


class Iterative(Strategy):
    """Hill climbing, one candidate a step: each step refines the best candidate so far — the last one
    when it improved, else the best before it (a step that got slower is not built upon)."""

    name = "iterative"

    def _plan(self, tree: SearchTree) -> list[int | None]:
        best = tree.best()
        return [best.candidate_id if best else None] * self.options.samples


class BestOfN(Strategy):
    """N samples per step from the best candidate so far."""

    name = "best-of-n"

    def _plan(self, tree: SearchTree) -> list[int | None]:
        best = tree.best()
        return [best.candidate_id if best else None] * self.options.samples


class Beam(Strategy):
    """Keep the `beam_width` best candidates; spread each step's samples over them."""

    name = "beam"

    def _plan(self, tree: SearchTree) -> list[int | None]:
        ranked = sorted((n for n in tree.nodes.values() if not n.failed), key=lambda n: (-n.value, n.step))
        beam = [n.candidate_id for n in ranked[: self.options.beam_width]] or [None]
        return [beam[i % len(beam)] for i in range(max(self.options.samples, len(beam)))]


class MCTS(Strategy):
    """UCT over the candidate tree with progressive widening and dead-end pruning.

    Visits and values come from the tree itself (each evaluated node backs up once), so there is no
    hidden state to lose; several samples per step are spread with a virtual loss.
    """

    name = "mcts"

    def _may_widen(self, tree: SearchTree, node_id: int | None, pending: int) -> bool:
        limit = self.options.widening_c * (tree.visits(node_id) + pending) ** self.options.widening_alpha
        return len(tree.children(node_id)) + pending < max(1, math.ceil(limit))

    def _select(self, tree: SearchTree, pending: dict[int | None, int]) -> int | None:
        node_id: int | None = None
        while True:
            if self._may_widen(tree, node_id, pending.get(node_id, 0)):
                return node_id
            children = [c for c in tree.children(node_id)
                        if not tree.is_dead_end(c.candidate_id, self.options.dead_end_patience)]
            if not children:
                return node_id
            node_id = max(children, key=lambda c: tree.uct(c.candidate_id, self.options.exploration)
                          - pending.get(c.candidate_id, 0)).candidate_id

    def _plan(self, tree: SearchTree) -> list[int | None]:
        pending: dict[int | None, int] = {}
        parents = []
        for _ in range(self.options.samples):
            choice = self._select(tree, pending)
            pending[choice] = pending.get(choice, 0) + 1
            parents.append(choice)
        return parents


def make_strategy(name: str, options: SearchOptions | None = None) -> Strategy:
    classes = {cls.name: cls for cls in (Iterative, BestOfN, Beam, MCTS)}
    if name not in classes:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGY_NAMES)}")
    return classes[name](options)
