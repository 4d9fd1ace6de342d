"""Brings outside problems into REFINERY_HOME: a KernelBench checkout or level folder, one
KernelBench file (an upload), a C program (a `.c` file, or a folder of them such as a PolyBench checkout:
`engine.problem_import.cimport`), or a folder in our own format.

A problem imported before is left as it is unless the import says `replace`: runs and labels name a problem by
its slug, and a second import that replaced it silently would change what they refer to. A KernelBench file is
named from its file (`19_ReLU.py` in `level1/` is kb-level1-19-relu), wherever it comes from.

KernelBench files are copied unchanged; a generated problem.toml gives them configurations derived
from their batch size (`engine.problems.derive`), each with the signature, FLOPs and bytes found by
running the reference once at it, in training mode as KernelBench does, inside the sandbox
(`engine.problem_import.probe_batch`). A file is imported only if it runs at its own sizes; a derived
configuration it cannot run is replaced or dropped, and the report says which and why.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from engine.problem_import.probe_batch import PROBE_MEMORY_MB, PROBE_TIMEOUT_S, ProbeRequest, ProbeSession
from engine.problems.derive import PlannedConfig, plan_configs
from engine.problems.library import AlreadyImported, ProblemError, check_pytorch_reference, load_problem
from engine.problems.model import Config, Problem, Signature
from engine.problems.paths import LINK, UnsafePath, copy_tree, walk
from engine.problems.sizes import BATCH_NAMES, read_sizes
from engine.problems.toml_text import toml_value

KERNELBENCH_FILE = re.compile(r"^(\d+)_(.+)\.py$")
NO_PROBLEM = ("holds no problem: no KernelBench file (named like 19_ReLU.py), no C program (a .c file with main) "
              "and no problem.toml")
NOT_A_PROBLEM_FILE = "expected a KernelBench .py file, a C program (.c) or a problem folder"


@dataclass
class ImportReport:
    imported: list[Problem] = field(default_factory=list)
    errors: list[ProblemError] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # "PATH: …": what was inferred, replaced or dropped, and why
    warnings: list[str] = field(default_factory=list)  # "PATH: …": what limits judging candidates (rounding)
    existing: list[str] = field(default_factory=list)  # slugs imported before that were left alone (no replace)


def _slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _level(path: Path) -> str | None:
    return path.parent.name if re.fullmatch(r"level\d+", path.parent.name) else None


def kernelbench_slug(path: Path) -> str:
    """kb-level1-19-relu for level1/19_ReLU.py, kb-19-relu for a 19_ReLU.py elsewhere (an upload); py-STEM for a
    file not named as KernelBench names them (as an imported C program is c-STEM)."""
    match = KERNELBENCH_FILE.match(path.name)
    if not match:
        return _slugify(f"py-{path.stem}")
    return _slugify("-".join(filter(None, ("kb", _level(path), match.group(1), match.group(2)))))


def kernelbench_tags(path: Path) -> list[str]:
    """kernelbench and its level for a file named as KernelBench names them, pytorch for any other."""
    if not KERNELBENCH_FILE.match(path.name):
        return ["pytorch"]
    return ["kernelbench", *filter(None, [_level(path)])]


@dataclass
class _File:
    """One KernelBench file on its way in: which configuration fills each place, and what failed."""

    key: str
    path: Path
    slug: str
    origin: str  # the problem's source: kernelbench, or upload for a PyTorch file not named as KernelBench's
    source: str
    plan: list[PlannedConfig]
    tried: dict[str, int] = field(default_factory=dict)  # role -> choices tried
    chosen: dict[str, tuple[Config, Signature]] = field(default_factory=dict)
    failed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # role -> (config, why)
    error: str | None = None

    def next_configs(self) -> list[tuple[str, Config]]:
        """The next choice of every unfilled place, the file's own sizes first."""
        if self.error is not None:
            return []
        wanted = [(p.role, p.choices[self.tried.get(p.role, 0)]) for p in self.plan
                  if p.role not in self.chosen and self.tried.get(p.role, 0) < len(p.choices)]
        return sorted(wanted, key=lambda rc: rc[0] != "written")

    def notes(self) -> list[str]:
        """Each configuration replaced or dropped, and a file with no batch size, as "PATH: why"."""
        notes = []
        for place in self.plan:
            for name, why in self.failed.get(place.role, []):
                instead = self.chosen.get(place.role)
                tail = f"; {instead[0].name!r} is used instead" if instead else "; dropped"
                notes.append(f"{self.path}: configuration {name!r} does not run ({why}){tail}")
        if len(self.plan) == 1:
            notes.append(f"{self.path}: no size reads as a batch ({', '.join(BATCH_NAMES)}): "
                         "one configuration, none hidden")
        return notes


def _settle(files: list[_File], session: ProbeSession) -> None:
    """Probe every file's next choices, round after round, until each place is filled or out of choices."""
    while True:
        asked = {f.key: f.next_configs() for f in files}
        requests = [ProbeRequest(f.key, f.path, f.source, tuple(c for _, c in asked[f.key]))
                    for f in files if asked[f.key]]
        if not requests:
            return
        outcomes = session.probe(requests)
        for file in files:
            if not asked[file.key]:
                continue
            outcome = outcomes[file.key]
            if outcome.error is not None:
                file.error = outcome.error
                continue
            for role, config in asked[file.key]:
                result = outcome.config(config.name)
                file.tried[role] = file.tried.get(role, 0) + 1
                if result is not None and result.ok:
                    file.chosen[role] = (config, result.signature)
                elif role == "written":
                    file.error = f"configuration {config.name!r}: {result.error if result else 'not run'}"
                else:
                    file.failed.setdefault(role, []).append((config.name, result.error if result else "not run"))


def _write_problem(file: _File, dest_root: Path) -> Path:
    folder = dest_root / "pytorch" / file.slug
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "reference.py").write_text(file.source)
    lines = [
        f"title = {toml_value(file.path.stem.split('_', 1)[-1].replace('_', ' '))}",
        'kind = "pytorch"',
        f"source = {toml_value(file.origin)}",
        f"tags = {toml_value(kernelbench_tags(file.path))}",
        f"description = {toml_value(f'Imported from {file.path.name}.')}",
    ]
    notes = [n.removeprefix(f"{file.path}: ") for n in file.notes()]
    lines += [f"notes = {toml_value(notes)}", ""] if notes else [""]
    for place in file.plan:
        if place.role not in file.chosen:
            continue
        config, signature = file.chosen[place.role]
        lines += ["[[configs]]", f"name = {toml_value(config.name)}", f"hidden = {toml_value(config.hidden)}",
                  f"params = {toml_value(config.params)}", f"signature = {toml_value(signature.to_json())}", ""]
    (folder / "problem.toml").write_text("\n".join(lines))
    tomllib.loads((folder / "problem.toml").read_text())  # a value we could not spell would fail here
    return folder


def _import_kernelbench(paths: list[Path], dest_root: Path, report: ImportReport, session: ProbeSession,
                        replace: bool) -> None:
    files = []
    for path in paths:
        slug = kernelbench_slug(path)
        if (dest_root / "pytorch" / slug).exists() and not replace:
            report.errors.append(AlreadyImported(path, slug, dest_root / "pytorch" / slug))
            report.existing.append(slug)
            continue
        try:
            check_pytorch_reference(path)
            source = path.read_text()
            sizes = read_sizes(source, str(path))
        except ProblemError as exc:
            report.errors.append(exc)
            continue
        except (OSError, UnicodeDecodeError) as exc:
            report.errors.append(ProblemError(path, f"cannot be read: {exc}"))
            continue
        origin = "kernelbench" if KERNELBENCH_FILE.match(path.name) else "upload"
        files.append(_File(str(len(files)), path, slug, origin, source, plan_configs(sizes)))
    _settle(files, session)
    for file in files:
        if file.error is not None:
            report.errors.append(ProblemError(file.path, file.error))
            continue
        try:
            report.imported.append(load_problem(_write_problem(file, dest_root), source="import"))
        except ProblemError as exc:
            report.errors.append(ProblemError(file.path, exc.cause))
            shutil.rmtree(dest_root / "pytorch" / file.slug, ignore_errors=True)
            continue
        report.notes += file.notes()


def _import_folder(path: Path, dest_root: Path, report: ImportReport, session: ProbeSession, replace: bool) -> None:
    """A problem in our own format: checked where it is, at every configuration, then copied (regular files only:
    a folder holding a link anywhere is refused, naming the link)."""
    from engine.problem_import.probe import validate

    links = walk(path).links
    if links:
        report.errors.append(ProblemError(links[0], LINK))
        return
    try:
        problem = load_problem(path, source="import")
        validate(problem, session=session)
    except ProblemError as exc:
        report.errors.append(exc)
        return
    target = dest_root / problem.kind / _slugify(path.name)
    if target.exists() and not replace:
        report.errors.append(AlreadyImported(path, target.name, target))
        report.existing.append(target.name)
        return
    if target.exists():
        shutil.rmtree(target)
    try:
        copy_tree(path, target)
    except UnsafePath as exc:
        shutil.rmtree(target, ignore_errors=True)
        report.errors.append(ProblemError(exc.path, exc.cause))
        return
    report.imported.append(load_problem(target, source="import"))


def _import_c(programs: list[Path], dest_root: Path, report: ImportReport, options) -> None:
    from engine.problem_import.cimport import import_program

    for program in programs:
        done = import_program(program, dest_root, options)
        report.notes += done.notes
        report.warnings += done.warnings
        if done.problem is not None:
            report.imported.append(done.problem)
        else:
            report.errors.append(ProblemError(program, done.error or "not imported"))
        if done.existing:
            report.existing.append(done.existing)


def _parts_notes(path: Path, programs: list[Path]) -> list[str]:
    """A word on each `.c` file that defines no main: compiled into the programs beside it, or imported as none."""
    from engine.problem_import.cimport.sources import without_main

    notes = []
    for part in without_main(path):
        if part.name == "polybench.c":  # the suite's timing helpers, which its programs' headers stand in for
            continue
        beside = [p.name for p in programs if p.parent == part.parent]
        if beside:
            notes.append(f"{part}: defines no main: compiled with {', '.join(beside)} beside it, as part of "
                         f"{'that program' if len(beside) == 1 else 'each of those programs'}")
        else:
            notes.append(f"{part}: defines no main, so it is no program of its own and was not imported "
                         "(a C program is a .c file with main; the files of one program go in one folder)")
    return notes


def import_path(path: Path, dest_root: Path | None = None, *, timeout_s: float = PROBE_TIMEOUT_S,
                memory_mb: int = PROBE_MEMORY_MB, session: ProbeSession | None = None,
                c_options=None, replace: bool = False) -> ImportReport:
    """Import a KernelBench file or folder (recursively), a C program or folder of them, or a problem folder of
    our format. A problem imported before under the same slug is refused (named in `existing`) unless `replace`.

    `timeout_s` bounds each KernelBench file's probe (all its configurations); `memory_mb` the probing sandbox;
    `c_options` (engine.problem_import.cimport.ImportOptions) what a C program does not say (include folders, the
    kernel's name, array lengths, datasets) and how long one of its runs may take.
    """
    from engine.problem_import.cimport import ImportOptions, find_programs
    from engine.problems.library import imported_root

    path, dest_root = Path(path), Path(dest_root or imported_root())
    c_options = dataclasses.replace(c_options or ImportOptions(), replace=replace)
    report = ImportReport()
    if path.is_symlink():
        report.errors.append(ProblemError(path, LINK))
        return report
    if not path.exists():
        report.errors.append(ProblemError(path, "no such file or folder"))
        return report
    if path.is_file() and path.suffix not in (".py", ".c"):
        report.errors.append(ProblemError(path, NOT_A_PROBLEM_FILE))
        return report
    is_folder_problem = path.is_dir() and (path / "problem.toml").is_file()
    if path.is_file():
        files, programs = ([path], []) if path.suffix == ".py" else ([], [path])
    elif is_folder_problem:
        files, programs = [], []
    else:
        tree = walk(path)  # no link is followed; one that could hold or be a problem is reported, the rest go on
        files = [p for p in tree.files if KERNELBENCH_FILE.match(p.name)]
        programs = find_programs(path)
        report.notes += _parts_notes(path, programs)
        report.errors += [ProblemError(link, LINK) for link in tree.links
                          if KERNELBENCH_FILE.match(link.name) or link.suffix == ".c" or link.is_dir()]
    if not files and not programs and not is_folder_problem:
        if not report.errors:
            report.errors.append(ProblemError(path, NO_PROBLEM))
        return report
    if programs:
        _import_c(programs, dest_root, report, c_options)
    if not files and not is_folder_problem:
        return report
    owned = session is None
    session = session or ProbeSession(timeout_s=timeout_s, memory_mb=memory_mb)
    try:
        if is_folder_problem:
            _import_folder(path, dest_root, report, session, replace)
        else:
            _import_kernelbench(files, dest_root, report, session, replace)
    finally:
        if owned:
            session.close()
    return report
