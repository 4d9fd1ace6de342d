"""A C problem's entry-point arguments with their sizes evaluated for one configuration."""

from __future__ import annotations

from engine.wire.c_inputs import ArgSpec


def arg_specs(problem, config) -> list[ArgSpec]:
    from engine.problems.expressions import evaluate

    specs = []
    for arg in problem.args:
        if arg.is_array:
            specs.append(ArgSpec(arg.name, arg.base_type, True, arg.intent, size=int(evaluate(arg.size, config.params)),
                                 init=arg.init))
        else:
            value = evaluate(arg.value, config.params)
            value = int(value) if arg.base_type in ("int", "long") else float(value)
            specs.append(ArgSpec(arg.name, arg.base_type, False, arg.intent, value=value))
    return specs
