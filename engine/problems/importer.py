"""Brings outside problems into REFINERY_HOME: a KernelBench checkout or level folder, one
KernelBench file (an upload), or a folder in our own format.

KernelBench files are copied unchanged; a generated problem.toml gives them configurations
derived from their batch constant (a batch of 1, the file's own sizes, and a hidden odd batch),
because a single shape invites shape specialisation.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from engine.problems.library import ProblemError, check_pytorch_reference, load_problem, module_int_constants
from engine.problems.model import Problem
from engine.problems.probe import validate

BATCH_NAMES = ("batch_size", "batch", "B", "N", "n", "num_samples")
KERNELBENCH_FILE = re.compile(r"^(\d+)_(.+)\.py$")


@dataclass
class ImportReport:
    imported: list[Problem] = field(default_factory=list)
    errors: list[ProblemError] = field(default_factory=list)


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def kernelbench_slug(path: Path) -> str:
    match = KERNELBENCH_FILE.match(path.name)
    stem = f"{match.group(1)}-{match.group(2)}" if match else path.stem
    level = path.parent.name if path.parent.name.startswith("level") else "upload"
    return _slugify(f"kb-{level}-{stem}")


def derived_configs(constants: dict[str, int | float]) -> list[dict]:
    """Small, as written, and a hidden odd batch; only the batch constant changes."""
    written = {"name": "as-written", "hidden": False, "params": dict(constants)}
    batch_name = next((n for n in BATCH_NAMES if isinstance(constants.get(n), int)), None)
    if batch_name is None or constants[batch_name] < 2:
        return [written]
    batch = constants[batch_name]
    configs = [{"name": "batch-1", "hidden": False, "params": {**constants, batch_name: 1}}, written]
    odd = batch // 2 + 1 if (batch // 2 + 1) % 2 else batch // 2 + 2
    if odd not in (1, batch):
        configs.append({"name": f"batch-{odd}", "hidden": True, "params": {**constants, batch_name: odd}})
    return configs


def _toml_value(value) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)


def _write_kernelbench_problem(source_file: Path, dest_root: Path, slug: str, origin: str) -> Path:
    check_pytorch_reference(source_file)
    constants = module_int_constants(source_file)
    folder = dest_root / "pytorch" / slug
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copyfile(source_file, folder / "reference.py")
    lines = [
        f"title = {_toml_value(source_file.stem.split('_', 1)[-1].replace('_', ' '))}",
        'kind = "pytorch"',
        f"source = {_toml_value(origin)}",
        f"tags = {_toml_value([origin])}",
        f"description = {_toml_value(f'Imported from {source_file.name}.')}",
        "",
    ]
    for config in derived_configs(constants):
        lines += ["[[configs]]", f"name = {_toml_value(config['name'])}",
                  f"hidden = {_toml_value(config['hidden'])}", f"params = {_toml_value(config['params'])}", ""]
    (folder / "problem.toml").write_text("\n".join(lines))
    tomllib.loads((folder / "problem.toml").read_text())  # a value we could not spell would fail here
    return folder


def _import_one(make_folder, dest_root: Path, report: ImportReport, origin_path: Path) -> None:
    folder = None
    try:
        folder = make_folder()
        problem = load_problem(folder, source="import")
        validate(problem)
        report.imported.append(problem)
    except ProblemError as exc:
        # Name the user's file, not our copy of it.
        report.errors.append(ProblemError(origin_path, exc.cause))
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def import_path(path: Path, dest_root: Path | None = None) -> ImportReport:
    """Import a KernelBench file or folder (recursively) or a problem folder of our format."""
    from engine.problems.library import imported_root

    path, dest_root = Path(path), Path(dest_root or imported_root())
    report = ImportReport()
    if not path.exists():
        report.errors.append(ProblemError(path, "no such file or folder"))
        return report
    if path.is_dir() and (path / "problem.toml").is_file():
        def copy_folder() -> Path:
            meta = tomllib.loads((path / "problem.toml").read_text())
            target = dest_root / str(meta.get("kind", "pytorch")) / _slugify(path.name)
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(path, target)
            return target
        _import_one(copy_folder, dest_root, report, path)
        return report
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*.py") if KERNELBENCH_FILE.match(p.name))
    if path.is_file() and path.suffix != ".py":
        report.errors.append(ProblemError(path, "expected a KernelBench .py file or a problem folder"))
        return report
    origin = "kernelbench" if path.is_dir() else "upload"
    for file in files:
        slug = kernelbench_slug(file) if origin == "kernelbench" else _slugify(f"upload-{file.stem}")
        _import_one(lambda f=file, s=slug: _write_kernelbench_problem(f, dest_root, s, origin), dest_root, report, file)
    return report
