"""Each search strategy chooses parents as it promises, from the tree alone."""

from __future__ import annotations

from engine.search import Node, SearchOptions, SearchTree, make_strategy


def node(cid, parent, step, reward, verdict="correct", sig=None):
    return Node(candidate_id=cid, parent_id=parent, step=step, reward=reward, verdict=verdict,
                signature=sig or f"s{cid}")


def test_first_step_of_every_strategy_starts_from_scratch():
    for name in ("iterative", "best-of-n", "beam", "mcts"):
        assert make_strategy(name, SearchOptions(samples=2)).plan(SearchTree()) == [None, None]


def test_iterative_refines_the_last_step_when_it_improved():
    tree = SearchTree([node(1, None, 0, 0.1), node(2, 1, 1, 0.3)])
    assert make_strategy("iterative").plan(tree) == [2]


def test_iterative_goes_back_to_the_best_when_the_last_step_got_slower():
    # run 1 of a CPU gemm: #3 at 1.80x came from #2 at 2.34x; the next step must refine #2, not #3
    tree = SearchTree([node(1, None, 0, 0.1), node(2, 1, 1, 0.85), node(3, 2, 2, 0.59)])
    assert make_strategy("iterative").plan(tree) == [2]


def test_iterative_falls_back_to_the_best_after_exhausted_retries():
    tree = SearchTree([node(1, None, 0, 0.4), node(2, 1, 1, -0.3, "incorrect"), node(3, 2, 2, -0.3, "incorrect"),
                       node(4, 3, 3, -0.3, "incorrect")])
    assert make_strategy("iterative", SearchOptions(max_retries=2)).plan(tree) == [1]


def test_all_failed_step_is_retried_from_its_failures():
    tree = SearchTree([node(1, None, 0, 0.2), node(2, 1, 1, -0.5, "compile_error"), node(3, 1, 1, -0.3, "incorrect")])
    assert make_strategy("best-of-n", SearchOptions(samples=2)).plan(tree) == [2, 3]


def test_best_of_n_samples_n_children_of_the_best():
    tree = SearchTree([node(1, None, 0, 0.2), node(2, 1, 1, 0.9), node(3, 1, 1, 0.1)])
    assert make_strategy("best-of-n", SearchOptions(samples=3)).plan(tree) == [2, 2, 2]


def test_beam_spreads_samples_over_the_top_k():
    tree = SearchTree([node(1, None, 0, 0.2), node(2, 1, 1, 0.9), node(3, 1, 1, 0.5), node(4, 1, 1, 0.1)])
    assert make_strategy("beam", SearchOptions(samples=4, beam_width=2)).plan(tree) == [2, 3, 2, 3]


def test_mcts_widens_the_root_only_as_visits_grow():
    strategy = make_strategy("mcts", SearchOptions(widening_c=1.0, widening_alpha=0.5))
    tree = SearchTree([node(1, None, 0, 0.5)])
    assert strategy.plan(tree) == [1]  # 1 child, sqrt(1) = 1 allowed: descend
    tree = SearchTree([node(1, None, 0, 0.5), node(2, 1, 1, 0.6), node(3, 1, 2, 0.7), node(4, 3, 3, 0.1)])
    assert strategy.plan(tree) is not None and strategy.plan(tree) == [None]  # 4 visits allow a 2nd root child


def test_mcts_prefers_the_subtree_with_higher_value():
    strategy = make_strategy("mcts", SearchOptions(exploration=0.1, widening_c=0.5))
    tree = SearchTree([node(1, None, 0, 1.0), node(2, None, 0, -0.2), node(3, 1, 1, 1.2), node(4, 2, 1, -0.1)])
    choice = strategy.plan(tree)[0]
    assert choice in (1, 3)


def test_mcts_prunes_dead_ends():
    strategy = make_strategy("mcts", SearchOptions(exploration=5.0, widening_c=0.3, dead_end_patience=2))
    nodes = [node(1, None, 0, 0.3), node(2, None, 0, -0.5, "compile_error")]
    nodes += [node(3, 2, 1, -0.5, "compile_error"), node(5, 3, 2, -0.5, "compile_error"), node(6, 1, 3, 0.2)]
    tree = SearchTree(nodes)
    assert tree.is_dead_end(2, patience=2)
    for _ in range(3):
        assert strategy.plan(tree)[0] not in (2, 3, 5)


def test_mcts_spreads_samples_with_virtual_loss():
    strategy = make_strategy("mcts", SearchOptions(samples=3, widening_c=2.0))
    tree = SearchTree([node(1, None, 0, 0.5), node(2, None, 0, 0.5)])
    assert len(set(strategy.plan(tree))) >= 2


def test_search_memory_lists_what_was_tried_under_each_parent():
    tree = SearchTree([node(1, None, 0, 0.5, sig="naive[]"), node(2, 1, 1, 0.6, sig="vec[B=256]")])
    assert tree.tried() == {(None, "naive[]"), (1, "vec[B=256]")}


def test_tree_rebuilt_in_any_order_has_the_same_shape():
    nodes = [node(3, 2, 2, 0.1), node(1, None, 0, 0.2), node(2, 1, 1, 0.3)]
    tree = SearchTree(nodes)
    assert tree.roots == [1] and tree.visits(1) == 3 and tree.visits(None) == 3


def test_iterative_follows_the_best_median_of_a_re_measured_code_not_its_lucky_evaluation():
    # the same code (signature "lucky") measured three times: once at 2.82x, then 1.80x and 1.83x
    tree = SearchTree([node(1, None, 0, 0.6, sig="steady"), node(2, 1, 1, 0.95, sig="lucky"),
                       node(3, 1, 2, 0.52, sig="lucky"), node(4, 1, 3, 0.53, sig="lucky")])
    assert make_strategy("iterative").plan(tree) == [1]
