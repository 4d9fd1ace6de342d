"""A C program as its author has it, gathered into one text the sandboxed compiler can take alone.

The program is the `.c` file that defines `main`, the other `.c` files beside it that define no main (a
program split into files), and the local headers they include: found beside it, in
the folders given with `--include`, or in the `utilities/` and `include/` folders of its parent folders
(where PolyBench keeps `polybench.h`). Each local `#include` is inlined where it
stands, between `#line` markers, so that the preprocessor, the compiler's messages and the parser still
name the user's files and lines. System headers (`<stdio.h>`) are left to the compiler.

What is inlined ends up in the stored reference.c, so no file is read through a link, a local `#include`
names a path below the folder it is found in (no absolute path, no `..`), and a parent folder itself is never
searched (walking up reached `/`, so `#include "etc/passwd"` in an upload inlined the host's file).

The sizes the program is built at are read from the text, never by running it: PolyBench's datasets
(the `#define`s under `#ifdef MINI_DATASET` … in the kernel's header) and the other integer `#define`s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from engine.problems.expressions import ExpressionError, evaluate
from engine.problems.paths import LINK, UnsafePath, check_not_link, inside, relative_name, walk

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)\s+(.+?)\s*(?://.*|/\*.*)?$")
DATASET_IF = re.compile(r"^\s*#\s*ifdef\s+([A-Z]+)_DATASET\b")
ENDIF = re.compile(r"^\s*#\s*endif\b")
WALK_UP_LEVELS = 6
MAX_INCLUDE_DEPTH = 16


class SourceError(ValueError):
    """The program cannot be gathered: names the file and what is missing."""


@dataclass(frozen=True)
class CProgram:
    """One program: its main file, the local headers inlined into `bundle`, and the sizes it names."""

    path: Path
    bundle: str
    headers: tuple[Path, ...] = ()
    datasets: dict[str, dict[str, int]] = field(default_factory=dict)  # MINI -> {M: 20, N: 30}, header order
    macros: dict[str, int] = field(default_factory=dict)  # other integer #defines of the program's own files
    polybench: bool = False  # it includes the suite's polybench.h

    @property
    def name(self) -> str:
        """The file's name, or its folder's where the file is only `main.c`."""
        return self.path.parent.name if self.path.stem.lower() == "main" else self.path.stem


HEADER_HINT = "name its folder with --include"


def defines_main(text: str) -> bool:
    return re.search(r"^\s*(?:int|void)\s+main\s*\(", text, re.MULTILINE) is not None


def find_programs(path: Path) -> list[Path]:
    """The `.c` files that define `main` under `path` (itself, if it is one), sorted."""
    if path.is_file():
        return [path]
    found = []
    for file in (f for f in walk(path).files if f.suffix == ".c"):  # a link is never followed (the caller names it)
        try:
            if defines_main(file.read_text(errors="replace")):
                found.append(file)
        except OSError:
            continue
    return found


def without_main(path: Path) -> list[Path]:
    """The `.c` files under the folder `path` that define no main (parts of a program, or no program at all)."""
    if path.is_file():
        return []
    found = []
    for file in (f for f in walk(path).files if f.suffix == ".c"):
        try:
            if not defines_main(file.read_text(errors="replace")):
                found.append(file)
        except OSError:
            continue
    return found


def _search_folders(program: Path, includes: tuple[Path, ...]) -> list[Path]:
    """The program's folder, the user's `--include` folders, and the `utilities/` and `include/` folders (not
    links) of its ancestors."""
    folders = [program.parent, *includes]
    here = program.parent.resolve()
    for _ in range(WALK_UP_LEVELS):
        if here.parent == here:
            break
        folders += [f for f in (here / "utilities", here / "include") if f.is_dir() and not f.is_symlink()]
        here = here.parent
    return list(dict.fromkeys(folders))


def _resolve(name: str, quoted: bool, including: Path, folders: list[Path], where: str,
             hint: str = HEADER_HINT) -> Path | None:
    """The local header `name` names, or None (left to the compiler); raises SourceError for a quoted name that
    leaves its folder or a header found as a link."""
    try:
        relative_name(name)
    except UnsafePath as exc:
        if not quoted:
            return None
        raise SourceError(f'{where}: #include "{name}" {exc.cause}: include the header by its name alone, and '
                          f"{hint}") from None
    candidates = ([including.parent] if quoted else []) + folders
    for folder in candidates:
        try:
            return inside(folder, name)
        except UnsafePath as exc:
            if exc.cause == LINK:
                raise SourceError(f"{where}: #include {name!r} is found at {folder / name}, which {LINK}") from None
        except OSError:
            continue
    return None


def _inline(path: Path, shown: str, folders: list[Path], headers: list[Path], depth: int,
            hint: str = HEADER_HINT) -> list[str]:
    if depth > MAX_INCLUDE_DEPTH:
        raise SourceError(f"{path}: local #includes nest deeper than {MAX_INCLUDE_DEPTH}")
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc})") from exc
    out = [f'#line 1 "{shown}"']
    for number, line in enumerate(lines, start=1):
        match = INCLUDE.match(line)
        found = (_resolve(match.group(2), match.group(1) == '"', path, folders, f"{path}:{number}", hint)
                 if match else None)
        if match and found is None and match.group(1) == '"':
            raise SourceError(f'{path}:{number}: #include "{match.group(2)}" not found beside it or in '
                              f"{', '.join(str(f) for f in folders[:3])}…; {hint}")
        if found is None:
            out.append(line)
            continue
        headers.append(found)
        # its folder and name only: the importing machine's layout stays out of the reference and datasets
        out.append(f"/* {line.strip()}: inlined from {'/'.join(found.parts[-2:])} */")
        out += _inline(found, match.group(2), folders, headers, depth + 1, hint)
        out.append(f'#line {number + 1} "{shown}"')
    return out


def _int_value(text: str, known: dict[str, int]) -> int | None:
    text = re.sub(r"(?<=\d)[uUlL]+\b", "", text.strip())
    try:
        value = evaluate(text, known)
    except ExpressionError:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_sizes(text: str) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    """(datasets, other integer #defines) of a program's text, in the order written."""
    datasets: dict[str, dict[str, int]] = {}
    macros: dict[str, int] = {}
    current: str | None = None
    depth = 0
    for line in text.splitlines():
        if current is None and (match := DATASET_IF.match(line)):
            current, depth = match.group(1), 0
            datasets.setdefault(current, {})
            continue
        if current is not None:
            if re.match(r"^\s*#\s*if", line):
                depth += 1
            elif ENDIF.match(line):
                if depth == 0:
                    current = None
                    continue
                depth -= 1
        match = DEFINE.match(line)
        if not match or "(" in match.group(1):
            continue
        value = _int_value(match.group(2), {**macros, **(datasets.get(current, {}) if current else {})})
        if value is None:
            continue
        if current is not None:
            datasets[current][match.group(1)] = value
        else:
            macros[match.group(1)] = value
    datasets = {name: sizes for name, sizes in datasets.items() if sizes}
    return datasets, {k: v for k, v in macros.items() if not any(k in d for d in datasets.values())}


def siblings(path: Path) -> list[Path]:
    """The other `.c` files beside the program that define no main: the rest of a program split into files.

    Raises SourceError for one that is a link (it would be inlined into the reference)."""
    found = []
    for file in sorted(path.parent.glob("*.c")):
        if file.is_symlink():
            raise SourceError(f"{path}: {file.name} beside it {LINK}")
        if file != path and file.is_file() and not defines_main(file.read_text(errors="replace")):
            found.append(file)
    return found


def gather(path: Path, includes: tuple[Path, ...] = (), hint: str = HEADER_HINT) -> CProgram:
    """The program whose `main` is in `path` (with the `.c` files beside it that define no main), its local
    headers inlined; raises SourceError, whose words for a missing header are `hint` (what the user can do where
    they are: a command line's --include, a form's upload)."""
    path = Path(path)
    try:
        check_not_link(path)
    except UnsafePath as exc:
        raise SourceError(f"{path}: {exc.cause}") from None
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    folders = _search_folders(path, tuple(Path(p) for p in includes))
    headers: list[Path] = []
    parts = [line for other in siblings(path) for line in _inline(other, other.name, folders, headers, 0, hint)]
    bundle = "\n".join(parts + _inline(path, path.name, folders, headers, 0, hint)) + "\n"
    own = [*siblings(path), path, *(h for h in headers if h.name != "polybench.h")]
    datasets: dict[str, dict[str, int]] = {}
    macros: dict[str, int] = {}
    for file in own:
        found, plain = read_sizes(file.read_text(errors="replace"))
        for name, sizes in found.items():
            datasets.setdefault(name, {}).update(sizes)
        macros.update(plain)
    macros = {k: v for k, v in macros.items() if not k.startswith("_") and not any(k in d for d in datasets.values())}
    polybench = any(h.name == "polybench.h" for h in headers)
    if not polybench and re.search(r"#\s*include\s*[<\"]polybench\.h", path.read_text(errors="replace")):
        raise SourceError(f"{path}: includes polybench.h, which is not beside it nor in a utilities/ folder "
                          f"above it; {hint} (PolyBench keeps it in utilities/)")
    return CProgram(path, bundle, tuple(dict.fromkeys(headers)), datasets, macros, polybench)
