"""Whether a reference draws random numbers when it runs (dropout, RReLU, sampling in `forward`), so
that the judge and the runner seed torch before every call of a model and an exact copy of the model
draws the same numbers as the reference. Read from the source (the `Model` class, not `get_inputs`,
which always draws), because the runner must know before it builds anything. Standard library only:
both sides of the boundary use it."""

from __future__ import annotations

import ast
import re

from engine.verify.wire.parsing import parse

_DRAWS = re.compile(r"dropout|bernoulli|multinomial|rrelu|\brand(n|int|perm|_like|n_like)?\s*\(|normal_\s*\(|"
                    r"uniform_\s*\(|exponential_\s*\(|\bpoisson\s*\(", re.IGNORECASE)


def model_source(source: str) -> str:
    """The text of the module's `Model` class (the whole file where it cannot be parsed or found)."""
    try:
        tree = parse(source)
    except SyntaxError:
        return source
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            return ast.get_source_segment(source, node) or source
    return source


def draws_random_numbers(source: str) -> bool:
    return bool(_DRAWS.search(model_source(source)))
