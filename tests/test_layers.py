"""The layers point one way: app → engine → db. Every module's imports are read with `ast` (those
inside functions too), so an import that only runs on some path still counts."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imported_packages(path: Path) -> set[str]:
    """The top-level package of every absolute import in `path`."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _offending(package: str, forbidden: set[str]) -> list[str]:
    return [f"{path.relative_to(ROOT)}: {name}" for path in sorted((ROOT / package).rglob("*.py"))
            for name in sorted(_imported_packages(path) & forbidden)]


def test_db_imports_neither_the_engine_nor_the_app():
    assert _offending("db", {"engine", "app", "streamlit"}) == []


def test_the_engine_imports_neither_the_app_nor_streamlit():
    assert _offending("engine", {"app", "streamlit"}) == []


def test_the_feedback_registry_imports_no_tool():
    """The tools import the registry to register; the package, not the registry, imports the built-in ones."""
    nodes = list(ast.walk(ast.parse((ROOT / "engine" / "feedback" / "registry.py").read_text())))
    imported = {node.module for node in nodes if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in nodes if isinstance(node, ast.Import) for alias in node.names}
    assert not {name for name in imported if name == "engine.feedback" or name.startswith("engine.feedback.tools")}


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    module = tmp_path / "late.py"
    module.write_text("def f():\n    from engine.settings import get_settings\n    import app.main\n")
    assert _imported_packages(module) == {"engine", "app"}
