"""The registry of feedback tools, and the run that selects, executes and ranks them.

A tool is a function from `Diagnostics` to findings, registered with the bottleneck classes it
serves; the candidate's class picks the tools that run (correctness and hazards serve every
class). Unknown class: every tool runs. This module imports no tool: the tools import it to
register, and the package (`engine.feedback`) imports the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from engine.analysis import Bottleneck
from engine.feedback.model import Diagnostics, Finding

ALL_CLASSES = frozenset(Bottleneck)
CORRECTNESS_SEVERITY = 2.0  # above every performance finding: a wrong kernel's speed does not matter


@dataclass(frozen=True)
class Tool:
    name: str
    serves: frozenset[Bottleneck]
    run: Callable[[Diagnostics], list[Finding]]
    description: str = ""


TOOLS: dict[str, Tool] = {}


def tool(name: str, serves: Iterable[Bottleneck] = ALL_CLASSES):
    """Decorator: register `fn(diagnostics) -> list[Finding]` under `name`, for the classes it serves."""

    def wrap(fn: Callable[[Diagnostics], list[Finding]]):
        TOOLS[name] = Tool(name, frozenset(serves), fn, (fn.__doc__ or "").strip().splitlines()[0])
        return fn

    return wrap


def all_tools() -> dict[str, Tool]:
    """Every registered tool by name (the built-in ones once `engine.feedback` is imported)."""
    return dict(TOOLS)


def select_tools(bottleneck: Bottleneck | None, names: Iterable[str] | None = None) -> list[Tool]:
    """The tools that serve `bottleneck` (all of them when it is unknown), optionally only `names`."""
    tools = all_tools()
    chosen = [tools[n] for n in names] if names is not None else list(tools.values())
    return [t for t in chosen if bottleneck is None or bottleneck in t.serves]


def rank(findings: list[Finding]) -> list[Finding]:
    """Most severe first; one finding per (tool, kernel, title), the strongest kept."""
    best: dict[tuple, Finding] = {}
    for finding in findings:
        key = (finding.tool, finding.kernel, finding.title)
        if key not in best or finding.severity > best[key].severity:
            best[key] = finding
    return sorted(best.values(), key=lambda f: (-f.severity, f.tool, f.kernel or "", f.line or 0))


def run_tools(diagnostics: Diagnostics, names: Iterable[str] | None = None,
              bottleneck: Bottleneck | None | str = "auto") -> list[Finding]:
    """Run the tools the candidate's bottleneck class selects; return their findings ranked.

    `bottleneck="auto"` uses `diagnostics.bottleneck` when it was measured (a class from the
    analytical model alone is too weak to silence tools: a naive GEMM is "compute-bound" on paper
    and starved by uncoalesced loads in fact), and runs every tool otherwise; None runs every tool.
    """
    if bottleneck == "auto":
        measured = diagnostics.classification is not None and diagnostics.classification.measured
        selected_class = diagnostics.bottleneck if measured else None
    else:
        selected_class = bottleneck
    findings: list[Finding] = []
    for entry in select_tools(selected_class, names):
        try:
            findings.extend(entry.run(diagnostics))
        except Exception as exc:  # noqa: BLE001 - one broken tool must not silence the others
            diagnostics.notes.append(f"tool {entry.name} failed: {type(exc).__name__}: {exc}")
    return rank(findings)
