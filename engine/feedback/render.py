"""The feedback text sent to the next round: a short ranked list of diagnoses, each with the one
number that proves it and the change that addresses it (raw counters stay in the dashboard)."""

from __future__ import annotations

from engine.feedback.diagnostics import CPU_NOTE
from engine.feedback.model import Diagnostics, Finding

DEFAULT_LIMIT = 5


def render_feedback(findings: list[Finding], diagnostics: Diagnostics | None = None,
                    limit: int = DEFAULT_LIMIT) -> str:
    """Plain text, most important first; says so when nothing needs fixing."""
    header = "Diagnosis"
    if diagnostics is not None and diagnostics.classification is not None:
        c = diagnostics.classification
        header += f" — {c.bottleneck.label} ({c.reason})"
    if diagnostics is not None and CPU_NOTE in diagnostics.notes:
        header += " — C on the CPU"
        if not findings:
            return f"{header}\nNo problem found (measured on the CPU: the GPU diagnostic tools do not apply)."
    if not findings:
        return f"{header}\nNo problem found by the diagnostic tools."
    lines = [header + ", most important first:"]
    for number, finding in enumerate(findings[:limit], start=1):
        lines.append(f"{number}. {finding.render()}")
    if len(findings) > limit:
        lines.append(f"({len(findings) - limit} smaller finding(s) omitted)")
    return "\n".join(lines)
