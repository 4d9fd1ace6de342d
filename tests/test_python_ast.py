"""Python parsing in the engine is thread-safe: one parse at a time, and no module parses around it."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from engine import python_ast

ENGINE = Path(__file__).resolve().parents[1] / "engine"


def test_parses_from_many_threads_all_succeed():
    source = (ENGINE / "analysis" / "static.py").read_text()
    with ThreadPoolExecutor(max_workers=4) as pool:
        trees = list(pool.map(lambda _: python_ast.parse(source), range(16)))
    assert all(tree.body for tree in trees)


def test_no_engine_module_calls_ast_parse_directly():
    direct = [str(path.relative_to(ENGINE)) for path in ENGINE.rglob("*.py")
              if path.name != "parsing.py" and re.search(r"\bast\.parse\(", path.read_text())]
    assert not direct
