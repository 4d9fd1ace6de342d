"""The correctness tool: which outputs mismatch and where, or why the candidate did not run."""

from __future__ import annotations

from engine.feedback.model import Diagnostics, Finding
from engine.feedback.registry import ALL_CLASSES, CORRECTNESS_SEVERITY, tool

_FAULT_HINTS = (
    ("illegal memory access", "an index runs past an array: check every bound (the last block, odd sizes)"),
    ("misaligned address", "a vector load/store on an address that is not 8/16-byte aligned: handle the head and "
                           "tail with scalar accesses"),
    ("out of memory", "the candidate allocates too much: reuse buffers, allocate outside the hot path"),
    ("too many resources requested", "the block needs more registers or shared memory than an SM has: shrink "
                                     "the block or cap registers with __launch_bounds__"),
    ("invalid configuration argument", "the launch's grid or block size is out of range (block <= 1024 threads, "
                                       "grid.y/z <= 65535)"),
)


def _first_error(log: str) -> str:
    for line in (log or "").splitlines():
        if "error" in line.lower():
            return line.strip()[:240]
    lines = (log or "").strip().splitlines()
    return lines[-1][:240] if lines else ""


def _mismatch(evaluation) -> Finding:
    failing = [c for c in evaluation.configs if not c.ok]
    names = ", ".join(c.name + (" (hidden)" if c.hidden else "") for c in failing)
    first = failing[0] if failing else None
    where = f": {first.first_mismatch}" if first is not None and first.first_mismatch else ""
    errors = ""
    if first is not None and first.max_abs_error is not None:
        errors = f" (max abs error {first.max_abs_error:.3g}"
        errors += f", max rel error {first.max_rel_error:.3g})" if first.max_rel_error is not None else ")"
    passing = [c for c in evaluation.configs if c.ok]
    if passing and all(c.hidden or "odd" in c.name for c in failing):
        fix = ("only some shapes fail: handle sizes that are not a multiple of the block/tile size (bounds checks "
               "on every load and store, a tail loop)")
    elif first is not None and first.max_rel_error is not None and first.max_rel_error < 1e-2:
        fix = "the error is small but over tolerance: accumulate in float (or double), avoid fast-math intrinsics"
    else:
        fix = "the result is wrong, not imprecise: check the index arithmetic and that every output element is written"
    return Finding(tool="correctness", category="correctness/incorrect",
                   title=f"wrong output on {len(failing)} of {len(evaluation.configs)} configurations",
                   evidence=f"{names}{where}{errors}", suggestion=fix, severity=CORRECTNESS_SEVERITY,
                   value=float(len(failing)))


@tool("correctness", serves=ALL_CLASSES)
def correctness(d: Diagnostics) -> list[Finding]:
    """Turns a failed evaluation into the place to look and the first thing to fix."""
    evaluation = d.evaluation
    if evaluation is None:
        return []
    verdict = str(getattr(evaluation, "verdict", ""))
    message = getattr(evaluation, "message", "") or ""
    log = getattr(evaluation, "log", "") or ""
    if verdict == "incorrect":
        return [_mismatch(evaluation)]
    if verdict == "compile_error":
        return [Finding(tool="correctness", category="correctness/compile-error", title="does not compile",
                        evidence=_first_error(log) or message, suggestion="fix this compile error first",
                        severity=CORRECTNESS_SEVERITY)]
    if verdict in ("runtime_error", "load_error"):
        text = f"{message}\n{log}".lower()
        fix = next((hint for key, hint in _FAULT_HINTS if key in text),
                   "fix the error before tuning: run with compute-sanitizer to find the faulting access")
        return [Finding(tool="correctness", category=f"correctness/{verdict.replace('_', '-')}",
                        title="fails at run time" if verdict == "runtime_error" else "does not load",
                        evidence=(message or _first_error(log))[:240], suggestion=fix,
                        severity=CORRECTNESS_SEVERITY)]
    if verdict == "timeout":
        return [Finding(tool="correctness", category="correctness/timeout", title="does not finish",
                        evidence=message or "the candidate ran past its time limit",
                        suggestion="look for a loop whose bound never changes or a barrier some threads never reach",
                        severity=CORRECTNESS_SEVERITY)]
    if verdict == "integrity_violation":
        failed = [f for f in getattr(evaluation, "integrity", []) if not f.passed]
        detail = "; ".join(f"{f.check}: {f.detail}" if f.detail else f.check for f in failed) or message
        return [Finding(tool="correctness", category="correctness/integrity", title="integrity check failed",
                        evidence=detail[:300], suggestion="compute the output from the inputs on every call, on the "
                        "current stream, with the candidate's own kernels", severity=CORRECTNESS_SEVERITY)]
    return []
