"""The candidate tree of one run, as the search strategies see it.

Everything a strategy needs (visits, values, dead ends, what was tried) is derived from the stored
nodes, so a run resumed after a crash rebuilds exactly the state it had from the database.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

FAILED_VERDICTS = frozenset({"compile_error", "load_error", "runtime_error", "timeout", "incorrect",
                             "integrity_violation", "proposal_error"})


@dataclass
class Node:
    candidate_id: int
    parent_id: int | None
    step: int
    reward: float | None
    verdict: str
    signature: str = ""  # what was proposed (implementation + tunables, or a hash of LLM code)
    findings: tuple[str, ...] = ()  # feedback tools that fired on this candidate
    children: list[int] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.verdict in FAILED_VERDICTS

    @property
    def value(self) -> float:
        return self.reward if self.reward is not None else 0.0


class SearchTree:
    def __init__(self, nodes: list[Node] | None = None) -> None:
        self.nodes: dict[int, Node] = {}
        self.roots: list[int] = []
        for node in sorted(nodes or [], key=lambda n: (n.step, n.candidate_id)):
            self.add(node)

    def add(self, node: Node) -> None:
        node.children = []
        self.nodes[node.candidate_id] = node
        if node.parent_id is not None and node.parent_id in self.nodes:
            self.nodes[node.parent_id].children.append(node.candidate_id)
        else:
            self.roots.append(node.candidate_id)

    def __len__(self) -> int:
        return len(self.nodes)

    def children(self, node_id: int | None) -> list[Node]:
        ids = self.roots if node_id is None else self.nodes[node_id].children
        return [self.nodes[i] for i in ids]

    def subtree(self, node_id: int) -> list[Node]:
        stack, found = [node_id], []
        while stack:
            node = self.nodes[stack.pop()]
            found.append(node)
            stack.extend(node.children)
        return found

    def visits(self, node_id: int | None) -> int:
        """MCTS visit count: every evaluated node backs up once through all its ancestors."""
        if node_id is None:
            return len(self.nodes)
        return len(self.subtree(node_id))

    def mean_value(self, node_id: int) -> float:
        sub = self.subtree(node_id)
        return sum(n.value for n in sub) / len(sub)

    def is_dead_end(self, node_id: int, patience: int = 3) -> bool:
        """A failed node whose last `patience` descendants all failed too is not worth more visits."""
        node = self.nodes[node_id]
        if not node.failed:
            return False
        sub = self.subtree(node_id)
        return len(sub) > patience and all(n.failed for n in sub)

    def last_step(self) -> int:
        return max((n.step for n in self.nodes.values()), default=-1)

    def step_nodes(self, step: int) -> list[Node]:
        return [n for n in self.nodes.values() if n.step == step]

    def best(self) -> Node | None:
        """The best code so far by the median reward of all its evaluations (nodes of one signature are
        the same code measured again): one lucky measurement of a code whose re-measurements were slower
        does not lead the search. The earliest node of the winning code stands for it."""
        scored = [n for n in self.nodes.values() if not n.failed and n.reward is not None]
        if not scored:
            return None
        codes: dict[str, list[Node]] = {}
        for n in sorted(scored, key=lambda n: (n.step, n.candidate_id)):
            codes.setdefault(n.signature or f"id:{n.candidate_id}", []).append(n)
        best = max(codes.values(), key=lambda same: (statistics.median(n.value for n in same), -same[0].step))
        return best[0]

    def failure_streak(self, node_id: int) -> int:
        """How many failed candidates in a row end at this node, walking up to the root."""
        streak, current = 0, self.nodes.get(node_id)
        while current is not None and current.failed:
            streak += 1
            current = self.nodes.get(current.parent_id) if current.parent_id is not None else None
        return streak

    def tried(self) -> set[tuple[int | None, str]]:
        """Search memory: (parent, signature) pairs already evaluated, shared by every strategy."""
        return {(n.parent_id, n.signature) for n in self.nodes.values()}

    def uct(self, node_id: int, exploration: float) -> float:
        node = self.nodes[node_id]
        parent_visits = self.visits(node.parent_id)
        return self.mean_value(node_id) + exploration * math.sqrt(math.log(parent_visits + 1) / self.visits(node_id))
