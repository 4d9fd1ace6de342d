"""Reads problem folders (the built-in library under assets/, and imported ones under REFINERY_HOME).

Reading never executes a problem's code: it parses TOML and checks the reference's syntax and
names with `ast`. Running `get_inputs` or compiling a C reference is `engine.problem_import.probe`'s job,
in a subprocess, so that a hanging or crashing upload cannot take the caller down.
"""

from __future__ import annotations

import ast
import tomllib
from dataclasses import dataclass
from pathlib import Path

from engine import python_ast
from engine.problems.expressions import ExpressionError, evaluate
from engine.problems.model import STRATEGIES, CArg, Config, Expectation, Implementation, Problem, Signature
from engine.problems.paths import UnsafePath, check_not_link, inside, optional_inside

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"
BUILTIN_DIR = ASSETS_DIR / "problems"
KINDS = ("pytorch", "c")
REQUIRED_PYTORCH_NAMES = ("Model", "get_inputs", "get_init_inputs")
C_TYPES = {"int", "long", "float", "double", "int*", "long*", "float*", "double*"}


class ProblemError(ValueError):
    """A malformed problem: names the file and the cause, for the user who wrote it."""

    def __init__(self, path: Path | str, cause: str) -> None:
        super().__init__(f"{path}: {cause}")
        self.path = Path(path)
        self.cause = cause


class AlreadyImported(ProblemError):
    """The file would land on a problem imported before: runs and labels name a problem by its slug, so a second
    import replaces it only when asked (`replace`)."""

    def __init__(self, path: Path | str, slug: str, folder: Path) -> None:
        super().__init__(path, f"is already imported as {slug} ({folder}); importing it again would replace that "
                               "problem, under every run made on it, so it was left as it is")
        self.slug = slug


@dataclass(frozen=True)
class LibraryScan:
    """Every problem that loaded, and every one that did not with its reason."""

    problems: tuple[Problem, ...]
    errors: tuple[ProblemError, ...]

    def by_slug(self) -> dict[str, Problem]:
        return {p.slug: p for p in self.problems}


def check_pytorch_reference(path: Path) -> None:
    """Syntax and the KernelBench names, without running anything."""
    try:
        tree = python_ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise ProblemError(path, f"syntax error at line {exc.lineno}: {exc.msg}") from exc
    defined = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
    missing = [name for name in REQUIRED_PYTORCH_NAMES if name not in defined]
    if missing:
        raise ProblemError(path, f"missing {', '.join(missing)} (a KernelBench problem defines "
                                 "Model, get_inputs and get_init_inputs)")


def module_int_constants(path: Path) -> dict[str, int | float]:
    """The sizes a configuration of a KernelBench file sets (see `engine.problems.sizes`)."""
    from engine.problems.sizes import read_sizes

    return read_sizes(path.read_text(), str(path)).params


def _require(table: dict, key: str, path: Path, kind: type | tuple = str):
    if key not in table:
        raise ProblemError(path, f"missing required field {key!r}")
    if not isinstance(table[key], kind):
        raise ProblemError(path, f"field {key!r} should be {getattr(kind, '__name__', kind)}")
    return table[key]


def _parse_configs(raw: list, toml_path: Path) -> tuple[Config, ...]:
    if not isinstance(raw, list) or not raw:
        raise ProblemError(toml_path, "no [[configs]]: a problem needs input configurations")
    configs = []
    for entry in raw:
        name = _require(entry, "name", toml_path)
        params = _require(entry, "params", toml_path, dict)
        signature = entry.get("signature")
        if signature is not None and not isinstance(signature, dict):
            raise ProblemError(toml_path, f"configuration {name!r}: signature should be a table")
        try:
            signature = Signature.from_json(signature) if signature is not None else None
        except (TypeError, ValueError, AttributeError) as exc:
            raise ProblemError(toml_path, f"configuration {name!r}: malformed signature ({exc})") from exc
        rounding = entry.get("rounding_sensitive", [])
        if not isinstance(rounding, list) or not all(isinstance(n, str) for n in rounding):
            raise ProblemError(toml_path, f"configuration {name!r}: rounding_sensitive should be a list of names")
        configs.append(Config(name=name, params=dict(params), hidden=bool(entry.get("hidden", False)),
                              signature=signature, rounding_sensitive=tuple(rounding)))
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ProblemError(toml_path, f"configuration names repeat: {names}")
    return tuple(configs)


def _parse_implementations(raw: list, folder: Path, toml_path: Path) -> tuple[Implementation, ...]:
    impls = []
    for entry in raw:
        name = _require(entry, "name", toml_path)
        file = _require(entry, "file", toml_path)
        try:
            path = inside(folder, file)
        except UnsafePath as exc:
            raise ProblemError(toml_path, f"implementation {name!r}: file {exc}") from None
        except FileNotFoundError:
            raise ProblemError(toml_path, f"implementation {name!r}: file {Path(file).name} does not exist") from None
        strategy = _require(entry, "strategy", toml_path)
        if strategy not in STRATEGIES:
            raise ProblemError(toml_path, f"implementation {name!r}: unknown strategy {strategy!r}")
        impls.append(Implementation(
            name=name, path=path, strategy=strategy, device=entry.get("device", "cuda"),
            summary=entry.get("summary", ""), tunables={k: list(v) for k, v in entry.get("tunables", {}).items()},
        ))
    return tuple(impls)


def _parse_args(raw: list, toml_path: Path) -> tuple[CArg, ...]:
    args = []
    for entry in raw:
        arg = CArg(name=_require(entry, "name", toml_path), type=_require(entry, "type", toml_path),
                   value=entry.get("value"), size=entry.get("size"), intent=entry.get("intent", "in"),
                   init=entry.get("init"))
        bare = arg.type.replace("const", "").replace(" ", "")
        if bare not in C_TYPES:
            raise ProblemError(toml_path, f"argument {arg.name!r}: unsupported type {arg.type!r}")
        if arg.is_array and arg.size is None:
            raise ProblemError(toml_path, f"array argument {arg.name!r} needs a size expression")
        if not arg.is_array and arg.value is None:
            raise ProblemError(toml_path, f"scalar argument {arg.name!r} needs a value expression")
        if arg.intent not in ("in", "out", "inout"):
            raise ProblemError(toml_path, f"argument {arg.name!r}: intent must be in, out or inout")
        args.append(arg)
    if not any(a.intent in ("out", "inout") for a in args):
        raise ProblemError(toml_path, "no argument has intent out or inout: nothing would be checked")
    return tuple(args)


def _check_expressions(problem: Problem, toml_path: Path) -> None:
    for config in problem.configs:
        exprs = [problem.flops_expr, problem.bytes_expr]
        exprs += [a.size for a in problem.args] + [a.value for a in problem.args]
        for expr in filter(None, exprs):
            try:
                evaluate(expr, config.params)
            except ExpressionError as exc:
                raise ProblemError(toml_path, f"configuration {config.name!r}: {exc}") from exc


def _words(meta: dict, key: str, toml_path: Path) -> tuple[str, ...]:
    value = meta.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ProblemError(toml_path, f"field {key!r} should be a list of strings")
    return tuple(value)


def _own_file(folder: Path, name: str) -> Path | None:
    """`folder/name` if it is there: a regular file, not a link (raises ProblemError naming it otherwise)."""
    try:
        return optional_inside(folder, name)
    except UnsafePath as exc:
        raise ProblemError(folder / name, exc.cause) from None


def load_problem(folder: Path, source: str = "builtin") -> Problem:
    """Parse one problem folder; raises ProblemError naming the offending file.

    Every file the problem names (problem.toml, the reference, inputs.py, each implementation) must be a regular
    file inside the folder with no link on the way (`engine.problems.paths`): none is ever read through a link.
    """
    folder = Path(folder)
    try:
        check_not_link(folder)
    except UnsafePath as exc:
        raise ProblemError(folder, exc.cause) from None
    except FileNotFoundError:
        raise ProblemError(folder, "no such folder") from None
    toml_path = folder / "problem.toml"
    if _own_file(folder, "problem.toml") is None:
        raise ProblemError(folder, "no problem.toml")
    try:
        meta = tomllib.loads(toml_path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ProblemError(toml_path, f"invalid TOML: {exc}") from exc
    kind = _require(meta, "kind", toml_path)
    if kind not in KINDS:
        raise ProblemError(toml_path, f"kind must be one of {KINDS}, not {kind!r}")
    reference_name = "reference.py" if kind == "pytorch" else "reference.c"
    reference = _own_file(folder, reference_name)
    if reference is None:
        raise ProblemError(folder, f"missing {reference_name}")
    if kind == "pytorch":
        check_pytorch_reference(reference)
    model = meta.get("model", {})
    inputs_path = _own_file(folder, "inputs.py")
    problem = Problem(
        slug=folder.name, kind=kind, title=_require(meta, "title", toml_path), folder=folder,
        reference_path=reference, description=meta.get("description", ""), tags=tuple(meta.get("tags", ())),
        dtype=meta.get("dtype", "float32"), rtol=meta.get("rtol"), atol=meta.get("atol"),
        configs=_parse_configs(meta.get("configs", []), toml_path),
        implementations=_parse_implementations(meta.get("implementations", []), folder, toml_path),
        expectations=tuple(Expectation(e["faster"], e["slower"]) for e in meta.get("expectations", [])),
        flops_expr=model.get("flops"), bytes_expr=model.get("bytes"),
        allowed_torch_ops=tuple(meta.get("allowed_torch_ops", ())), source=meta.get("source", source),
        entry=meta.get("entry") if kind == "c" else None,
        args=_parse_args(meta.get("args", []), toml_path) if kind == "c" else (),
        inputs_path=inputs_path,
        notes=_words(meta, "notes", toml_path), warnings=_words(meta, "warnings", toml_path),
    )
    if kind == "c" and not problem.entry:
        raise ProblemError(toml_path, "a C problem needs `entry`, the reference function's name")
    impl_names = {i.name for i in problem.implementations}
    for expectation in problem.expectations:
        for name in (expectation.faster, expectation.slower):
            if name not in impl_names:
                raise ProblemError(toml_path, f"expectation names unknown implementation {name!r}")
    _check_expressions(problem, toml_path)
    return problem


def scan(root: Path, source: str = "builtin") -> LibraryScan:
    """Every problem folder under `root/<kind>/`; a broken one is reported and the rest still load."""
    problems, errors = [], []
    for kind in KINDS:
        base = Path(root) / kind
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
            try:
                problems.append(load_problem(folder, source))
            except ProblemError as exc:
                errors.append(exc)
    return LibraryScan(tuple(problems), tuple(errors))


def imported_root() -> Path:
    from engine.settings import get_settings

    return get_settings().imported_problems_dir


def scan_all() -> LibraryScan:
    """The built-in library plus everything imported into this REFINERY_HOME."""
    builtin, imported = scan(BUILTIN_DIR), scan(imported_root(), source="import")
    return LibraryScan(builtin.problems + imported.problems, builtin.errors + imported.errors)


def get_problem(slug: str) -> Problem:
    for root, source in ((BUILTIN_DIR, "builtin"), (imported_root(), "import")):
        for kind in KINDS:
            folder = Path(root) / kind / slug
            if folder.is_dir():
                return load_problem(folder, source)
    raise KeyError(f"no problem with slug {slug!r}")
