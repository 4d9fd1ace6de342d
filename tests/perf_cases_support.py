"""The corpus of real CUDA performance bugs (`tests/perf_cases/<category>/<case>/`): each case is a slow
program and its fix, reduced by hand from a public commit, pull request or issue, with `case.toml`
naming the source, the root cause in its authors' words and the category.

A case is found when `analyse_file` (the `refinery analyze` path: the run's tools over the static
report) names the root cause's kind on `slow.cu` and not on `fixed.cu`. The kind is the set of tools
whose findings name that category (`KIND_TOOLS`).
"""

from __future__ import annotations

import functools
import tomllib
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).parent / "perf_cases"
CATEGORIES = ("uncoalesced-access", "bank-conflicts", "launch-configuration", "branch-divergence",
              "imbalanced-work", "loop-unrolling")
# the feedback tools whose findings name each category's root cause
KIND_TOOLS: dict[str, frozenset[str]] = {
    "uncoalesced-access": frozenset({"coalescing"}),
    "bank-conflicts": frozenset({"bank-conflicts"}),
    "launch-configuration": frozenset({"launch-configuration", "occupancy"}),
    "branch-divergence": frozenset({"divergence"}),
    "imbalanced-work": frozenset({"imbalanced-work"}),
    "loop-unrolling": frozenset({"unrolling"}),
}


@dataclass(frozen=True)
class Case:
    """One buggy/fixed pair and what its authors said about it."""

    category: str
    name: str
    folder: Path
    source: str  # URL of the commit, pull request, issue or article
    root_cause: str  # as the authors named it
    arch: str = "sm_90"
    sizes: tuple[tuple[str, int], ...] = ()
    xfail: str = ""  # why the analysis misses it today ("" = expected to be found)

    @property
    def id(self) -> str:
        return f"{self.category}/{self.name}"


def load_cases() -> list[Case]:
    """Every case of the corpus, sorted by category then name."""
    cases = []
    for toml in sorted(CORPUS.glob("*/*/case.toml")):
        data = tomllib.loads(toml.read_text())
        category = toml.parent.parent.name
        if category not in CATEGORIES or data.get("category") != category:
            raise ValueError(f"{toml}: category {data.get('category')!r} does not match its folder {category!r}")
        cases.append(Case(category, toml.parent.name, toml.parent, data["source"], data["root_cause"],
                          data.get("arch", "sm_90"), tuple(sorted(data.get("sizes", {}).items())),
                          data.get("xfail", "")))
    return cases


@functools.cache
def analysed(path: Path, arch: str, sizes: tuple[tuple[str, int], ...] = ()):
    """`refinery analyze` on one file of the corpus (builds cached with the other analysis tests)."""
    from engine.feedback.standalone import analyse_file
    from tests.analysis_support import cache_dir

    return analyse_file(path.read_bytes(), path.name, arch=arch, sizes=dict(sizes), cache_dir=cache_dir())


def kind_findings(case: Case, side: str) -> list:
    """The findings of `side` ("slow" or "fixed") that name the case's root-cause kind."""
    result = analysed(case.folder / f"{side}.cu", case.arch, case.sizes)
    return [f for f in result.findings if f.tool in KIND_TOOLS[case.category]]


def verdict(case: Case) -> tuple[bool, bool]:
    """(named on the slow program, named on the fixed one)."""
    return bool(kind_findings(case, "slow")), bool(kind_findings(case, "fixed"))
