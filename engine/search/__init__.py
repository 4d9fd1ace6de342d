"""Search over the candidate tree: iterative, best-of-N, beam and MCTS, all with a retry buffer for
all-failed steps and a memory of what was tried (derived from the tree, so resumable)."""

from engine.search.strategies import STRATEGY_NAMES, SearchOptions, Strategy, make_strategy
from engine.search.tree import FAILED_VERDICTS, Node, SearchTree

__all__ = ["FAILED_VERDICTS", "STRATEGY_NAMES", "Node", "SearchOptions", "SearchTree", "Strategy", "make_strategy"]
