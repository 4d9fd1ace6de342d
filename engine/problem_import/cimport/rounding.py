"""Does the program's own answer depend on rounding? Asked of every imported program, per configuration.

A GPU compiler contracts `a * b + c` into one fused multiply-add, and a parallel kernel sums in another order;
the reference is built with neither (`cc -O3`: x86-64 has no FMA instruction without `-mfma`, and C forbids
reordering sums). So the import builds the reference a second time, from the same text, differing only in
rounding (`TWIN_FLAGS`: contraction into FMA where this CPU has it, and reassociated sums), and the check runs
both on the same inputs, the program's own and each check's (`engine.untrusted.probe.problem._drift`). Where their
outputs differ beyond the problem's tolerance, no candidate can be judged there as the problem stands: a correct
one that rounds otherwise is as far from the reference as a wrong one. The import says so in one line
(`rounding_warning`) and marks those configurations (`Config.rounding_sensitive`), and an `incorrect` verdict on
them says so (`engine.verify.prepare.rounding_caveat`). Nothing is hidden: the verdict stays `incorrect`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

REASSOCIATE = ("-fassociative-math", "-fno-signed-zeros", "-fno-trapping-math")
FMA = ("-mfma", "-ffp-contract=fast")


@cache
def has_fma(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU runs FMA instructions (a library built with -mfma would die of SIGILL otherwise)."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        return False
    return any(line.startswith("flags") and "fma" in line.split(":", 1)[-1].split() for line in text.splitlines())


def twin_flags() -> tuple[tuple[str, ...], str]:
    """(the compiler flags the twin build adds to the reference's, the rounding they change, in words)."""
    if has_fma():
        return FMA + REASSOCIATE, "fused multiply-adds and reordered sums"
    return ("-ffp-contract=fast", *REASSOCIATE), "reordered sums (this CPU has no FMA)"


@dataclass(frozen=True)
class Drift:
    """One output array: how far the twin build's values lie from the reference's over every run."""

    name: str
    beyond: int  # elements beyond the tolerance, in the run with the most
    total: int  # elements of the array
    max_abs: float
    max_rel: float


@dataclass(frozen=True)
class RoundingCheck:
    """One configuration: every floating-point output's drift under another rounding."""

    config: str
    arrays: tuple[Drift, ...]

    @property
    def sensitive(self) -> tuple[str, ...]:
        """The outputs that moved beyond the tolerance: the configuration cannot judge a candidate on them."""
        return tuple(a.name for a in self.arrays if a.beyond)

    @property
    def moved(self) -> bool:
        """Whether the other rounding changed anything at all (within the tolerance or not)."""
        return any(a.max_abs > 0 for a in self.arrays)


def checks_from(configs: dict) -> dict[str, RoundingCheck]:
    """The probe's per-configuration `rounding` tables as records."""
    return {name: RoundingCheck(name, tuple(Drift(array, *values) for array, values in outcome["rounding"].items()))
            for name, outcome in configs.items() if outcome.get("rounding")}


def rounding_warning(kernel: str, checks: dict[str, RoundingCheck], tolerance: tuple[float, float],
                     how: str) -> str | None:
    """The one line an import prints where the program's own results change with rounding, or None."""
    marked = [c for c in checks.values() if c.sensitive]
    if not marked:
        return None
    rtol, atol = tolerance
    first = marked[0]
    worst = max((a for a in first.arrays if a.beyond), key=lambda a: a.beyond)
    grouped: dict[tuple[str, ...], list[str]] = {}
    for check in marked[1:]:
        grouped.setdefault(check.sensitive, []).append(repr(check.config))
    also = "; also " + "; ".join(f"{', '.join(arrays)} on {', '.join(configs)}"
                                 for arrays, configs in grouped.items()) if grouped else ""
    return (f"the program's own results change with rounding: {kernel} built with {how} gives other "
            f"{', '.join(first.sensitive)} on configuration {first.config!r} ({worst.beyond} of {worst.total} elements "
            f"of {worst.name} beyond rtol {rtol:g}, atol {atol:g}; largest difference {worst.max_abs:.3g}{also}) than "
            "built as the reference is, on the same inputs: ill-conditioned inputs; no candidate can be judged on them "
            "as is — give inputs in inputs.py or widen the tolerance (rtol, atol in problem.toml); an incorrect "
            f"verdict on {'this configuration' if len(marked) == 1 else 'these configurations'} says so")
