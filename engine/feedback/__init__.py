"""Feedback for the next round: pluggable diagnostic tools over a candidate's diagnostics.

`build_diagnostics` assembles static report, ncu summary, evaluation and device into
`Diagnostics` with a roofline point and bottleneck class; `run_tools` runs the tools that class
selects and ranks their `Finding`s; `render_feedback` turns them into the short text a proposer
reads. New tools register with `@tool(name, serves=...)`; the built-in ones (the `tools_*`
modules) are imported here, so whoever uses the registry (it sits inside this package) sees them all.
"""

from engine.feedback import (  # noqa: F401 - imported for their registrations
    tools_compute,
    tools_correctness,
    tools_memory,
    tools_parallelism,
    tools_sync,
    tools_warp,
)
from engine.feedback.diagnostics import build_diagnostics
from engine.feedback.model import Diagnostics, Finding
from engine.feedback.registry import TOOLS, Tool, all_tools, rank, run_tools, select_tools, tool
from engine.feedback.render import render_feedback

__all__ = ["TOOLS", "Diagnostics", "Finding", "Tool", "all_tools", "build_diagnostics", "rank", "render_feedback",
           "run_tools", "select_tools", "tool"]
