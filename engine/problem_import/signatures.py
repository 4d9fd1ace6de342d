"""What a problem's reference takes and gives at each configuration, for `refinery problems show`.

Imported KernelBench problems carry theirs (found when imported); a C problem's follows from its
[[args]] without running anything; a library PyTorch problem is probed on demand, in the sandbox, at
every configuration (its reference is code like any other).
"""

from __future__ import annotations

from engine.problems.model import Problem, Signature, ValueSpec

C_DTYPES = {"int": "int32", "long": "int64", "float": "float32", "double": "float64"}


def c_signature(problem: Problem, config) -> Signature:
    """Arrays the entry point reads (in, inout) and writes (out, inout); its scalars as init arguments."""
    from engine.problems.c_args import arg_specs

    inputs, outputs, init = [], [], []
    for spec in arg_specs(problem, config):
        if not spec.is_array:
            init.append(ValueSpec(value=f"{spec.name}={spec.value}"))
            continue
        value = ValueSpec(shape=(spec.size,), dtype=C_DTYPES.get(spec.base_type, spec.base_type), name=spec.name)
        if spec.intent in ("in", "inout"):
            inputs.append(value)
        if spec.intent in ("out", "inout"):
            outputs.append(value)
    return Signature(tuple(inputs), tuple(outputs), tuple(init), ran_on="args")


def signatures(problem: Problem, probe: bool = True) -> tuple[dict[str, Signature | None], str | None]:
    """(signature by configuration name, why some are missing or None)."""
    if problem.kind == "c":
        return {c.name: c_signature(problem, c) for c in problem.configs}, None
    found = {c.name: c.signature for c in problem.configs}
    missing = [c for c in problem.configs if c.signature is None]
    if not missing or not probe:
        return found, None if not missing else "not probed"
    from engine.problem_import.probe_batch import ProbeRequest, ProbeSession

    with ProbeSession() as session:
        outcome = session.probe([ProbeRequest("show", problem.reference_path, problem.reference_source,
                                              tuple(missing))])["show"]
    if outcome.error is not None:
        return found, outcome.error
    errors = []
    for config in missing:
        result = outcome.config(config.name)
        if result is not None and result.ok:
            found[config.name] = result.signature
        else:
            errors.append(f"configuration {config.name!r}: {result.error if result else 'not run'}")
    return found, "; ".join(errors) or None
