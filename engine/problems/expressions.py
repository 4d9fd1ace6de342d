"""Arithmetic over configuration parameters (analytical FLOPs/bytes, C argument sizes, the size constants
of a KernelBench file), safely.

The expressions come from problem files that users may upload, so they are evaluated with
simpleeval's restricted evaluator rather than `eval`, and within bounds: `**`, `*` and `<<`, the operations
whose result can outgrow their operands without limit, refuse (TooLarge) before computing an integer of more
than MAX_INT_BITS bits or a sequence longer than MAX_SEQUENCE, so `9**9**9` or `'a' * 10**10` costs
microseconds, not the process. The candidate analysis (`engine.analysis.source.launch`) uses the same operations.
"""

from __future__ import annotations

import ast
import math

from simpleeval import MAX_STRING_LENGTH, EvalWithCompoundTypes, InvalidExpression

MAX_INT_BITS = 4096  # no size, count, FLOP or byte figure comes near; 2**4096 has 1234 digits
MAX_SEQUENCE = MAX_STRING_LENGTH  # a string, tuple or list made by `*`
_FUNCTIONS = {"min": min, "max": max, "log2": math.log2, "ceil": math.ceil, "floor": math.floor, "sqrt": math.sqrt}


class TooLarge(ArithmeticError):
    """An operation refused before it ran: its result would be past MAX_INT_BITS or MAX_SEQUENCE."""


_FAULTS = (InvalidExpression, SyntaxError, TypeError, ValueError, ZeroDivisionError, KeyError, NameError,
           OverflowError, AttributeError, IndexError, TooLarge)


class ExpressionError(ValueError):
    pass


def _bits(value: object) -> int:
    return abs(value).bit_length() if isinstance(value, int) else 0


def _shown(value: object) -> str:
    return f"a {_bits(value)}-bit number" if _bits(value) > 64 else repr(value)


def bounded_pow(a, b):
    """`a ** b`, refused where an integer result would have more than MAX_INT_BITS bits."""
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 and b * math.log2(abs(a)) > MAX_INT_BITS:
        raise TooLarge(f"{_shown(a)} ** {_shown(b)} would have more than {MAX_INT_BITS} bits")
    return a ** b


def bounded_mul(a, b):
    """`a * b`, refused past MAX_INT_BITS bits, or for a repeated sequence, past MAX_SEQUENCE items."""
    for seq, count in ((a, b), (b, a)):
        if hasattr(seq, "__len__") and isinstance(count, int) and len(seq) * max(count, 0) > MAX_SEQUENCE:
            raise TooLarge(f"a sequence of {len(seq)} repeated {_shown(count)} times is longer than {MAX_SEQUENCE}")
    if isinstance(a, int) and isinstance(b, int) and _bits(a) + _bits(b) > MAX_INT_BITS + 1:
        raise TooLarge(f"{_shown(a)} * {_shown(b)} would have more than {MAX_INT_BITS} bits")
    return a * b


def bounded_lshift(a, b):
    """`a << b`, refused where the result would have more than MAX_INT_BITS bits."""
    if isinstance(a, int) and isinstance(b, int) and a and _bits(a) + b > MAX_INT_BITS:
        raise TooLarge(f"{_shown(a)} << {_shown(b)} would have more than {MAX_INT_BITS} bits")
    return a << b


BOUNDED = {ast.Pow: bounded_pow, ast.Mult: bounded_mul, ast.LShift: bounded_lshift}


def evaluate_value(expression: str, names: dict[str, object]):
    """The value of `expression` (a number, or a tuple or list of them) with `names` known; raises
    ExpressionError on any fault, including a call or a name it does not know."""
    evaluator = EvalWithCompoundTypes(names=dict(names), functions=_FUNCTIONS)
    evaluator.operators = {**evaluator.operators, **BOUNDED}
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
