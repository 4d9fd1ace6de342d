"""Arithmetic over configuration parameters (analytical FLOPs/bytes, C argument sizes), safely.

The expressions come from problem files that users may upload, so they are evaluated with
simpleeval's restricted evaluator rather than `eval`.
"""

from __future__ import annotations

import math

from simpleeval import EvalWithCompoundTypes, InvalidExpression

_FUNCTIONS = {"min": min, "max": max, "log2": math.log2, "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt}


class ExpressionError(ValueError):
    pass


def evaluate(expression: str, params: dict[str, int | float]) -> int | float:
    """The value of `expression` with `params` as its names; raises ExpressionError on any fault."""
    evaluator = EvalWithCompoundTypes(names=dict(params), functions=_FUNCTIONS)
    try:
        value = evaluator.eval(str(expression))
    except (InvalidExpression, SyntaxError, TypeError, ZeroDivisionError, KeyError, NameError) as exc:
        raise ExpressionError(f"cannot evaluate {expression!r}: {exc}") from exc
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ExpressionError(f"{expression!r} gave {value!r}, not a number")
    return value
