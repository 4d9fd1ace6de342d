"""The program's own code with its macros expanded, parsed: what the analysis, the input translation and the
CUDA port read.

The preprocessor runs in the sandbox like every compile of imported code (an `#include "/etc/…"` must find
nothing). Sizes stay names rather than numbers: each size macro is defined as itself (`-DN=N`), which
skips PolyBench's dataset block and leaves `N` in the text, so the code reads in terms of the
configuration's parameters. The output keeps only what the program's own files contributed (the
preprocessor's line markers tell them from system headers); the system's typedef names it uses are
declared as stand-ins so that pycparser, which needs every type name, can read it.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pycparser import c_ast, c_parser
from pycparser.c_parser import ParseError

from engine.compilation.sandboxed import SCRATCH, compile_sandboxed
from engine.problem_import.cimport.sources import CProgram, SourceError

C_COMPILER = "cc"
PREPROCESS_TIMEOUT_S = 60
MARKER = re.compile(r'^#\s+\d+\s+"([^"]*)"')
_GNU = [(re.compile(r"\b__restrict__\b|\b__restrict\b"), "restrict"), (re.compile(r"\b__inline__\b|\b__inline\b"),
                                                                       "inline"),
        (re.compile(r"\b__extension__\b"), ""), (re.compile(r"\b__const\b"), "const")]


@dataclass(frozen=True)
class Unit:
    """The program's code, preprocessed and parsed: its functions, typedefs and what defines them."""

    text: str
    ast: c_ast.FileAST
    stubs: frozenset[str] = frozenset()  # typedef names declared as stand-ins for the system's

    @property
    def functions(self) -> dict[str, c_ast.FuncDef]:
        return {ext.decl.name: ext for ext in self.ast.ext if isinstance(ext, c_ast.FuncDef)}

    @property
    def typedefs(self) -> dict[str, c_ast.Typedef]:
        return {ext.name: ext for ext in self.ast.ext if isinstance(ext, c_ast.Typedef)}

    @property
    def globals(self) -> dict[str, c_ast.Decl]:
        return {ext.name: ext for ext in self.ast.ext
                if isinstance(ext, c_ast.Decl) and ext.name and not isinstance(ext.type, c_ast.FuncDecl)}


def symbolic_bundle(program: CProgram, names: list[str]) -> str:
    """The bundle with each plain size `#define` made symbolic (`#define N N`), so sizes stay names."""
    text = program.bundle
    for name in names:
        if name in program.macros:
            text = re.sub(rf"^(\s*#\s*define\s+{name}\b).*$", rf"\1 {name}", text, flags=re.MULTILINE)
    return text


def preprocess(text: str, flags: list[str], label: str) -> str:
    """`cc -E` of `text` in the sandbox; raises SourceError with the compiler's first error."""
    cc = shutil.which(C_COMPILER) or C_COMPILER
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "program.i"
        done = compile_sandboxed([cc, "-E", "-std=gnu11", *flags, "-o", f"{SCRATCH}/program.i", f"{SCRATCH}/program.c"],
                                 {"program.c": text}, {"program.i": output}, PREPROCESS_TIMEOUT_S)
        if not done.ok:
            first = next((ln for ln in done.log.splitlines() if "error" in ln), done.log.strip()[:300])
            if "No such file" in first:
                first += " (name the folder that holds it with --include)"
            raise SourceError(f"{label}: the preprocessor failed: {first}")
        return output.read_text(errors="replace")


def _system_typedefs(text: str) -> set[str]:
    names = set()
    for statement in re.split(r";", re.sub(r"\{[^{}]*\}", "{}", re.sub(r"\{[^{}]*\}", "{}", text))):
        statement = statement.strip()
        if not statement.startswith(("typedef", "__extension__ typedef")):
            continue
        pointer = re.search(r"\(\s*\*\s*(\w+)\s*\)", statement)
        last = re.findall(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\]\s*)*$", statement)
        if pointer:
            names.add(pointer.group(1))
        elif last:
            names.add(last[-1])
    return names


def own_code(preprocessed: str) -> tuple[str, set[str]]:
    """(the program's own lines with their line markers, the typedef names the system headers declared)."""
    ours, system, keep = [], [], True
    for line in preprocessed.splitlines():
        match = MARKER.match(line)
        if match:
            name = match.group(1)
            keep = not (name.startswith(("/", "<")) or "/" in name and not name.startswith("."))
            if keep:
                ours.append(line)
            continue
        if line.startswith("#") and not line.lstrip("#").lstrip().startswith("pragma"):
            continue
        (ours if keep else system).append(line)
    return "\n".join(ours) + "\n", _system_typedefs("\n".join(system))


def parse(program: CProgram, flags: list[str], symbolic: list[str]) -> Unit:
    """The program's own code, preprocessed with `flags` and its sizes in `symbolic` kept as names."""
    defines = [f"-D{name}={name}" for name in symbolic]
    text, system_types = own_code(preprocess(symbolic_bundle(program, symbolic), [*flags, *defines],
                                             str(program.path)))
    for pattern, replacement in _GNU:
        text = pattern.sub(replacement, text)
    text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", text)
    used = set(re.findall(r"[A-Za-z_]\w*", text))
    stubs = "".join(f"typedef int {name};\n" for name in sorted(system_types & used))
    try:
        ast = c_parser.CParser().parse(stubs + text, filename=program.path.name)
    except ParseError as exc:
        raise SourceError(f"{program.path}: cannot be read as C after preprocessing ({exc})") from exc
    return Unit(text, ast, frozenset(system_types & used))
