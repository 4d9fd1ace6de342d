"""Whether a reference draws random numbers when it runs (dropout, RReLU, sampling in `forward`), so
that the judge and the runner seed torch before every call of a model and an exact copy of the model
draws the same numbers as the reference. Read from the source (the `Model` class, not `get_inputs`,
which always draws), because the runner must know before it builds anything. Standard library only:
both sides of the boundary use it.

Numbers drawn while the model is built (`self.bn.weight.uniform_()` in `__init__`) do not count: both
sides build their models under the same seed already. Seeding before every call where nothing is drawn
in the call would cost the reference its float64 twin (the rounding allowance; a TF32 convolution then
rejected every exact candidate of conv-bn-relu) and put a seeding on the host before every timed call.
In `__init__` only random *layers* count (`nn.Dropout`, `nn.RReLU`): they draw when called."""

from __future__ import annotations

import ast
import re

from engine.wire.parsing import parse

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


_RANDOM_LAYERS = re.compile(r"dropout|rrelu", re.IGNORECASE)


def _call_time_text(source: str, model: str) -> str:
    """The model's text without what only runs while it is built: `__init__`, except its random layers."""
    try:
        tree = parse(model)
    except SyntaxError:
        return model
    kept = []
    for cls in tree.body:
        if not isinstance(cls, ast.ClassDef):
            return model
        for node in cls.body:
            text = ast.get_source_segment(model, node) or ""
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                kept.extend(_RANDOM_LAYERS.findall(text))
            else:
                kept.append(text)
    return "\n".join(kept)


def draws_random_numbers(source: str) -> bool:
    model = model_source(source)
    return bool(_DRAWS.search(_call_time_text(source, model) if model is not source else model))
