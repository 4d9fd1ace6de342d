"""Arithmetic over configuration parameters (analytical FLOPs/bytes, C argument sizes, the size constants
of a KernelBench file), safely.

The expressions come from problem files that users may upload, so they are evaluated with
simpleeval's restricted evaluator rather than `eval`.
"""

from __future__ import annotations

import math

from simpleeval import EvalWithCompoundTypes, InvalidExpression

_FUNCTIONS = {"min": min, "max": max, "log2": math.log2, "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt}
_FAULTS = (InvalidExpression, SyntaxError, TypeError, ValueError, ZeroDivisionError, KeyError, NameError,
           OverflowError, AttributeError, IndexError)


class ExpressionError(ValueError):
    pass


def evaluate_value(expression: str, names: dict[str, object]):
    """The value of `expression` (a number, or a tuple or list of them) with `names` known; raises
    ExpressionError on any fault, including a call or a name it does not know."""
    evaluator = EvalWithCompoundTypes(names=dict(names), functions=_FUNCTIONS)
    try:
        return evaluator.eval(str(expression))
    except _FAULTS as exc:
        raise ExpressionError(f"cannot evaluate {expression!r}: {exc}") from exc


def evaluate(expression: str, params: dict[str, int | float]) -> int | float:
    """The value of `expression` with `params` as its names; raises ExpressionError on any fault."""
    value = evaluate_value(expression, params)
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise ExpressionError(f"{expression!r} gave {value!r}, not a number")
    return value
