"""The trust boundary is visible in engine/verify/'s layout: what runs inside a candidate's sandbox
(runner/) and what both sides share (wire/) import nothing from the trusted side, and a runner's
sandbox shows it only those folders."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from engine.sandbox.programs import CODE_ROOT, RUNNER_PACKAGES, code_mounts

VERIFY = Path(__file__).resolve().parents[1] / "engine" / "verify"
SANDBOX_SIDE = ("engine.verify.runner", "engine.verify.wire")


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names if node.module == "engine.verify"]
    return names


@pytest.mark.parametrize("folder", ["runner", "wire"])
def test_the_sandbox_side_imports_nothing_from_the_trusted_side(folder):
    offending = []
    for path in sorted((VERIFY / folder).glob("*.py")):
        for name in _imports(path):
            if name.startswith("engine") and not name.startswith(SANDBOX_SIDE):
                offending.append(f"{path.name}: {name}")
    assert offending == []


def test_the_judge_never_imports_candidate_code_loaders():
    loaders = ("engine.verify.runner.torch_candidate", "engine.verify.runner.c_candidate", "engine.verify.runner.serve")
    offending = [f"{p.name}: {n}" for p in (VERIFY / "judge").glob("*.py") for n in _imports(p) if n in loaders]
    assert offending == []


def test_a_runner_sandbox_shows_only_the_sandbox_side_of_the_source_tree():
    targets = {m.target for m in code_mounts(RUNNER_PACKAGES)}
    assert f"{CODE_ROOT}/engine/verify/runner" in targets and f"{CODE_ROOT}/engine/verify/wire" in targets
    assert not any(t.endswith(("/judge", "/settings.py", "/problems", "/db")) for t in targets)
    assert all(t.endswith("__init__.py") or t.endswith("lazy_exports.py") or "/verify/runner" in t
               or "/verify/wire" in t for t in targets)
