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


def _imported_modules(path: Path) -> set[str]:
    """The full dotted name of every absolute import in `path` (`from a.b import c` gives a.b and a.b.c)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def _offending(package: str, forbidden: set[str]) -> list[str]:
    return [f"{path.relative_to(ROOT)}: {name}" for path in sorted((ROOT / package).rglob("*.py"))
            for name in sorted(_imported_packages(path) & forbidden)]


def _python_files(*parts: str) -> list[Path]:
    return sorted(p for part in parts for p in ([ROOT / part] if part.endswith(".py") else (ROOT / part).rglob("*.py")))


SCHEMA = "engine.schema"  # the leaf record schema every layer may read
STORE = ("engine/store/evaluation.py",)  # maps EvaluationResult to and from the evaluation row


def _outside_schema(name: str) -> bool:
    return name.split(".")[0] == "engine" and name != "engine" and not (name == SCHEMA or name.startswith(SCHEMA + "."))


def test_db_imports_neither_the_engine_nor_the_app():
    assert _offending("db", {"app", "streamlit"}) == []
    assert [f"{p.relative_to(ROOT)}: {n}" for p in _python_files("db") for n in sorted(_imported_modules(p))
            if _outside_schema(n)] == []


def test_no_sql_library_is_imported_outside_db_and_the_store():
    offending = [f"{p.relative_to(ROOT)}: {name}" for p in _python_files("engine", "app")
                 if str(p.relative_to(ROOT)) not in STORE
                 for name in sorted(_imported_packages(p) & {"sqlmodel", "sqlalchemy"})]
    assert offending == []


def test_the_settings_and_the_record_schema_import_nothing_of_the_engine():
    for path in _python_files("engine/settings.py", "engine/schema"):
        modules = _imported_modules(path)
        assert not {m for m in modules if _outside_schema(m)}, path
        assert not {m.split(".")[0] for m in modules} & {"db", "app", "streamlit", "sqlmodel", "sqlalchemy"}, path


# --- the evaluation's timing blob is read as a record (`EvaluationTiming`), never key by key ----------------


def _is_blob(node: ast.AST, blob_names: set[str]) -> bool:
    """An expression holding a row's `timing` JSON: `x.timing`, `row["eval_timing"]`, `x.timing or {}`,
    `dict(x.timing)`, or a name bound to one of those."""
    if isinstance(node, ast.Attribute):
        return node.attr == "timing"
    if isinstance(node, ast.Subscript):
        return isinstance(node.slice, ast.Constant) and node.slice.value in ("timing", "eval_timing")
    if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
        return _is_blob(node.values[0], blob_names)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and node.args:
        return _is_blob(node.args[0], blob_names)
    return isinstance(node, ast.Name) and node.id in blob_names


def timing_key_reads(source: str) -> list[int]:
    """Lines that read a key of the timing blob: `blob.get("key")`, `blob["key"]` or `"key" in blob`, where
    the blob is one of `_is_blob`'s expressions or a parameter named for timing and typed as a dict.
    Other `timing` attributes (a slot's timing cores, a job's timing spec) are read by attribute or by
    index, never by a string key, so they are not hit."""
    tree = ast.parse(source)
    blob_names = {arg.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                  for arg in node.args.args + node.args.kwonlyargs
                  if "timing" in arg.arg and arg.annotation is not None and "dict" in ast.unparse(arg.annotation)}
    for _ in range(2):  # `timing = ev.timing or {}`, then `stats = timing or {}`
        blob_names |= {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign | ast.AnnAssign)
                       and node.value is not None and _is_blob(node.value, blob_names)
                       for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
                       if isinstance(target, ast.Name)}
    return sorted(node.lineno for node in ast.walk(tree) if _reads_key(node, blob_names))


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _reads_key(node: ast.AST, blob_names: set[str]) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and _is_text(node.args[0]) and _is_blob(node.func.value, blob_names)
    if isinstance(node, ast.Subscript):
        return _is_text(node.slice) and _is_blob(node.value, blob_names)
    if isinstance(node, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
        return _is_text(node.left) and any(_is_blob(c, blob_names) for c in node.comparators)
    return False


def test_nothing_outside_the_store_reads_the_timing_blob_by_key():
    allowed = {*STORE, "engine/schema/evaluation.py"}
    offending = [f"{p.relative_to(ROOT)}:{line}" for p in _python_files("engine", "app", "db", "benchmarks")
                 if str(p.relative_to(ROOT)) not in allowed for line in timing_key_reads(p.read_text())]
    assert offending == []


def test_the_timing_rule_sees_key_reads_and_leaves_other_timing_names_alone():
    reads = """
reason = (ev.timing or {}).get("flag_reason")
timing = ev.timing or {}
baseline = timing.get("baseline_name") or timing["baseline"]
config = row["eval_timing"]["timed_config"]
held = "host" in dict(ev.timing)
def context(timing: dict | None) -> str:
    return (timing or {}).get("timed_config")
"""
    assert timing_key_reads(reads) == [2, 4, 4, 5, 6, 8]
    others = """
cores = slot.timing[0]
first = timing[i::slots]
seed = job.timing.seed if job.timing else 0
record = EvaluationTiming.from_stored(ev.timing).flag_reason
"""
    assert timing_key_reads(others) == []


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



# The trust boundary is one folder: everything that runs untrusted code lives in engine/untrusted, which
# imports only itself and engine/wire (what both sides share), and every sandbox of those programs shows
# exactly those two folders (engine.sandbox.programs.UNTRUSTED_PACKAGES).

UNTRUSTED, WIRE = "engine.untrusted", "engine.wire"


def _named_modules(path: Path) -> list[str]:
    """Every absolute module an import in `path` names (`from engine import x` names `engine.x`)."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: a relative import would slip past these checks"
            names += [f"{node.module}.{a.name}" for a in node.names] if node.module == "engine" else [node.module]
    return names


def _within(name: str, *packages: str) -> bool:
    return any(name == package or name.startswith(f"{package}.") for package in packages)


def _reaching_out(folder: Path, allowed: tuple[str, ...]) -> list[str]:
    """The imports in `folder` of our own code (engine, db, app) outside the `allowed` packages."""
    return [f"{path.relative_to(folder)}: {name}" for path in sorted(folder.rglob("*.py"))
            for name in _named_modules(path) if _within(name, "engine", "db", "app") and not _within(name, *allowed)]


def test_the_untrusted_folder_imports_only_itself_and_the_wire():
    assert _reaching_out(ROOT / "engine" / "untrusted", (UNTRUSTED, WIRE)) == []


def test_the_wire_imports_only_itself():
    assert _reaching_out(ROOT / "engine" / "wire", (WIRE,)) == []


def test_the_judge_imports_nothing_from_the_untrusted_folder():
    judge = ROOT / "engine" / "verify" / "judge"
    assert [n for p in judge.rglob("*.py") for n in _named_modules(p) if _within(n, UNTRUSTED)] == []


def test_the_boundary_check_sees_an_import_reaching_out_inside_a_function(tmp_path):
    (tmp_path / "leak.py").write_text("from engine.wire import timing\n\n\ndef f():\n    from engine import settings\n"
                                      "    import db.models\n")
    assert _reaching_out(tmp_path, (UNTRUSTED, WIRE)) == ["leak.py: engine.settings", "leak.py: db.models"]


def _string_constants(path: Path) -> list[str]:
    return [node.value for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_every_untrusted_sandbox_shows_exactly_the_untrusted_folder_and_the_wire():
    from engine.sandbox.programs import CODE_ROOT, UNTRUSTED_PACKAGES, code_mounts

    assert tuple(name.replace(".", "/") for name in (UNTRUSTED, WIRE)) == UNTRUSTED_PACKAGES
    assert {m.target for m in code_mounts(UNTRUSTED_PACKAGES)} == {
        f"{CODE_ROOT}/engine/__init__.py", f"{CODE_ROOT}/engine/untrusted", f"{CODE_ROOT}/engine/wire"}
    assert _named_modules(ROOT / "engine" / "__init__.py") == []  # the one file above them imports nothing


def test_every_sandboxed_program_of_ours_is_given_one_of_the_named_lists():
    """What a sandbox shows is spelled once, in engine/sandbox/programs.py: every call that mounts code or
    sets PYTHONPATH names one of its lists (or None: a compiler, no code of ours), never a tuple of its own."""
    lists = {"UNTRUSTED_PACKAGES", "JUDGE_PACKAGES"}
    spelled = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        if path == ROOT / "engine" / "sandbox" / "programs.py":  # where the lists are, and passed along
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            position = 1 if name == "_start" else 0
            argument = node.args[position] if len(node.args) > position else None
            if name in {"mounts_for", "python_env", "code_mounts", "_start"} and argument is not None:
                forwarded = isinstance(argument, ast.Name) and argument.id == "packages" and path.name == "pool.py"
                if not (forwarded or getattr(argument, "id", None) in lists
                        or (isinstance(argument, ast.Constant) and argument.value is None)):
                    spelled.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(argument)}")
    assert spelled == []


def _is_program(module: str) -> bool:
    """Whether `python -m module` runs something: a package with a `__main__`, or a module that checks
    `__name__`."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return False
    origin = Path(spec.origin)
    if spec.submodule_search_locations:
        return (origin.parent / "__main__.py").exists()
    return '__name__ == "__main__"' in origin.read_text()


def test_each_sandboxed_program_is_started_with_the_list_of_its_side():
    """A module that starts a program of engine/untrusted names UNTRUSTED_PACKAGES; one that starts the
    judge names JUDGE_PACKAGES."""
    wrong = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        if _within(".".join(path.relative_to(ROOT).with_suffix("").parts), UNTRUSTED):
            continue
        names = {node.id for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Name)}
        for program in _string_constants(path):
            for side, needed in ((UNTRUSTED, "UNTRUSTED_PACKAGES"), ("engine.verify.judge", "JUDGE_PACKAGES")):
                if _within(program, side) and " " not in program and needed not in names and _is_program(program):
                    wrong.append(f"{path.relative_to(ROOT)}: {program} without {needed}")
    assert wrong == []


def test_every_module_path_spelled_in_a_string_exists():
    """Programs are started by module path (`python -m …`), looked up by name (`sys.modules.get(…)`, lazy
    exports) or patched by it (`monkeypatch.setattr("module.name", …)`): a path left behind by a move would
    fail only when that line runs."""
    import re

    dotted = re.compile(r"(engine|db|app)(\.[A-Za-z_]\w*)+")
    missing = []
    for folder in ("engine", "tests", "benchmarks", "app"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for text in _string_constants(path):
                if dotted.fullmatch(text) and not (_is_module(text) or _is_module(text.rsplit(".", 1)[0])):
                    missing.append(f"{path.relative_to(ROOT)}: {text}")
    assert missing == []


def _is_module(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent that is a module, not a package
        return False


# --- the engine's packages are layers: every import points down, and no package loop ---------------------
# Lowest first. A package may import only packages of layers below its own (peers on one layer import nothing of
# each other). `engine.verify.judge` counts as a package of its own (it drives the untrusted side); `engine.wire` is the
# one thing both sides of the sandbox speak, `engine.untrusted` every program that runs untrusted code.
LAYERS: tuple[tuple[str, ...], ...] = (
    # leaves: they import nothing of the engine (toolchain: where nvcc and the disassemblers are)
    ("engine.settings", "engine.schema", "engine.lazy_exports", "engine.toolchain"),
    ("engine.wire",),  # imports only itself
    ("engine.untrusted", "engine.python_ast"),  # the untrusted side; the one `ast` lock (kept in the wire)
    ("engine.problems", "engine.sandbox"),  # the problem records and library; the OS boundary
    ("engine.compilation",),  # the compile step: candidates and references, in the sandbox
    ("engine.problem_import",),  # brings problems in: builds, probes in the sandbox
    ("engine.verify.judge",),  # times and checks a runner's calls; measures energy
    ("engine.verify",),  # prepares jobs, the worker pools and the choice between them
    ("engine.analysis",),  # reads source, binary and profile; profiles a verified candidate
    ("engine.feedback",),  # tools over the analysis
    ("engine.propose", "engine.rank", "engine.reward", "engine.search"),
    ("engine.store", "engine.export"),  # rows written and read back as records; datasets
    ("engine.runs",),  # a run: the pipeline over all of the above
    ("engine.cli",),  # the command line, which nothing imports
)

# Arrows that still run back up, each with why it is left; the test fails once an arrow is gone, so the list only
# shrinks. None is left.
KNOWN_BACK_EDGES: dict[tuple[str, str], str] = {}

_OWN_PACKAGES = ("engine.verify.judge",)  # a subfolder that is a layer of its own


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str:
    """The layer unit a module belongs to: `engine.<pkg>` (a root module counts as its own), or one of
    `_OWN_PACKAGES` for the folders of verify that are packages in their own right."""
    for own in _OWN_PACKAGES:
        if module == own or module.startswith(own + "."):
            return own
    return ".".join(module.split(".")[:2])


def engine_imports(path: Path, modules: set[str], root: Path = ROOT) -> set[str]:
    """Every engine module `path` imports, those inside functions too, relative imports resolved; `from a import b`
    names the module a.b where b is one, else a."""
    here = _module_name(path, root)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
    return {name for name in found if name in modules}


def package_edges(root: Path = ROOT) -> dict[tuple[str, str], list[str]]:
    """(importer, imported) package pairs across engine's packages, each with the module imports that make it."""
    paths = sorted((root / "engine").rglob("*.py"))
    modules = {_module_name(p, root) for p in paths}
    edges: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        source = _module_name(path, root)
        for target in sorted(engine_imports(path, modules, root)):
            pair = (package_of(source), package_of(target))
            if target != "engine" and pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{source} -> {target}")
    return edges


def back_edges(edges: dict[tuple[str, str], list[str]], layers=LAYERS) -> dict[tuple[str, str], list[str]]:
    """The edges whose importer is not on a layer strictly above the imported package's."""
    level = {package: i for i, layer in enumerate(layers) for package in layer}
    return {pair: why for pair, why in edges.items() if level[pair[0]] <= level[pair[1]]}


def find_cycle(edges) -> list[str] | None:
    """One package loop among `edges`, or None."""
    from graphlib import CycleError, TopologicalSorter

    graph: dict[str, set[str]] = {}
    for importer, imported in edges:
        graph.setdefault(importer, set()).add(imported)
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as loop:
        return loop.args[1]
    return None


def test_every_engine_package_is_on_a_layer():
    declared = [package for layer in LAYERS for package in layer]
    assert len(declared) == len(set(declared))
    packages = {package_of(_module_name(p)) for p in (ROOT / "engine").rglob("*.py")} - {"engine"}
    assert packages - set(declared) == set(), "place the new package on a layer"
    assert set(declared) - packages == set(), "a declared package no longer exists"


def test_every_import_between_engine_packages_points_down_a_layer():
    found = back_edges(package_edges())
    assert {pair: why for pair, why in found.items() if pair not in KNOWN_BACK_EDGES} == {}
    assert set(KNOWN_BACK_EDGES) - set(found) == set(), "a known back-arrow is gone: take it off the list"


def test_the_engine_packages_form_no_loop_but_the_known_exceptions():
    edges = {pair for pair in package_edges() if pair not in KNOWN_BACK_EDGES}
    assert find_cycle(edges) is None


def test_the_layer_rules_see_a_back_arrow_a_loop_and_a_relative_import(tmp_path):
    for name, text in {"engine/__init__.py": "", "engine/settings.py": "from engine.runs import run\n",
                       "engine/runs/__init__.py": "", "engine/runs/run.py": "def f():\n    from ..settings import X\n",
                       "engine/cli/__init__.py": "from . import output\n", "engine/cli/output.py": ""}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    edges = package_edges(tmp_path)
    assert set(edges) == {("engine.settings", "engine.runs"), ("engine.runs", "engine.settings")}
    layers = (("engine.settings",), ("engine.runs",), ("engine.cli",))
    assert set(back_edges(edges, layers)) == {("engine.settings", "engine.runs")}
    assert find_cycle(edges) is not None
    assert find_cycle({("engine.runs", "engine.settings")}) is None
