"""The imported problem's reference.c: the program's own text, cut to its kernel, and an entry point over
flat arrays at the end.

The user's code stays as written (macros, comments, PolyBench's `POLYBENCH_2D` parameters): the local
headers are inlined where the program includes them and the functions the kernel does not need (main,
`init_array`, `print_array`) are left out, each gap marked and followed by a `#line` so that compiler
messages still name the user's lines. `POLYBENCH_USE_C99_PROTO` makes PolyBench's array parameters take
their sizes at run time. The entry point `<kernel>_flat` takes the harness's flat arrays and hands the
kernel its own array types (`(double (*)[n])A`); a size macro the kernel reads by name (`z[N]` in durbin)
becomes a variable the entry point sets on each call, and an element type the harness does not carry
(`char`) is copied to and from an `int` array.
"""

from __future__ import annotations

import re

from engine.problem_import.cimport.ctype import CType
from engine.problem_import.cimport.layout import Layout
from engine.problem_import.cimport.program import Analysis, KernelArg, c_text

MACRO_VARIABLE = "refinery_size_{}"


def entry_name(analysis: Analysis) -> str:
    return f"{analysis.kernel}_flat"


def entry_type(arg: KernelArg, intent: str) -> str:
    """The type problem.toml and both sides' entry points give an argument (`const double*`, `int`)."""
    if not arg.is_array:
        return arg.ctype.entry
    return f"{'const ' if intent == 'in' else ''}{arg.ctype.entry}*"


def entry_params(analysis: Analysis, intents: dict[str, str]) -> list[tuple[str, str]]:
    """(type, name) of every entry point parameter: the kernel's, then one per size macro it reads."""
    params = [(entry_type(a, intents.get(a.name, "inout")), a.name) for a in analysis.args]
    return params + [("int", f"size_{m}") for m in analysis.kernel_macros]


def signature(analysis: Analysis, intents: dict[str, str]) -> str:
    params = ", ".join(f"{t.replace('*', ' *')}{n}" if t.endswith("*") else f"{t} {n}"
                       for t, n in entry_params(analysis, intents))
    return f"void {entry_name(analysis)}({params})"


def array_cast(ctype: CType, name: str, const: bool = False) -> str:
    """`(double (*)[n][m])A` for a parameter `double A[k][n][m]`; a one-dimensional array needs no cast."""
    if len(ctype.dims) < 2:
        return name
    inner = "".join(f"[{c_text(d)}]" for d in ctype.dims[1:])
    return f"({'const ' if const else ''}{ctype.spelled} (*){inner}){name}"


def _count(arg: KernelArg) -> str:
    return " * ".join(f"(long)({d})" for d in arg.dims)


def _wrapper(analysis: Analysis, intents: dict[str, str]) -> str:
    lines = ["", "/* ---- the entry point over flat arrays, added by the importer ---- */",
             signature(analysis, intents), "{"]
    for macro in analysis.kernel_macros:
        lines.append(f"    {MACRO_VARIABLE.format(macro)} = size_{macro};")
    call, after = [], []
    for arg in analysis.args:
        if not arg.is_array:
            call.append(arg.name if not arg.ctype.narrowed else f"({arg.ctype.spelled}){arg.name}")
            continue
        if not arg.ctype.narrowed:
            call.append(array_cast(arg.ctype, arg.name))
            continue
        narrow, count = f"{arg.name}_narrow", _count(arg)
        lines += [f"    {arg.ctype.spelled} *{narrow} = ({arg.ctype.spelled} *)malloc(sizeof({arg.ctype.spelled}) * "
                  f"{count});",
                  f"    for (long i = 0; i < {count}; i++) {narrow}[i] = ({arg.ctype.spelled}){arg.name}[i];"]
        call.append(array_cast(arg.ctype, narrow))
        if intents.get(arg.name, "inout") != "in":
            after.append(f"    for (long i = 0; i < {count}; i++) {arg.name}[i] = {narrow}[i];")
        after.append(f"    free({narrow});")
    lines.append(f"    {analysis.kernel}({', '.join(call)});")
    return "\n".join([*lines, *after, "}", ""])


def _macro_overrides(macros: tuple[str, ...]) -> list[str]:
    return [f"#undef {m}\n#define {m} {MACRO_VARIABLE.format(m)}" for m in macros]


def reference_text(analysis: Analysis, bundle: str, source_name: str, polybench: bool,
                   intents: dict[str, str]) -> str:
    """reference.c: a banner, the program's text cut to the kernel's functions, the flat entry point."""
    layout = Layout(bundle)
    lines = list(layout.lines)
    keep = set(analysis.closure)
    removed = []
    spans = []
    for name, function in analysis.unit.functions.items():
        if name not in keep:
            spans.append((*layout.function_span(function), name))
    for start, end, name in sorted(spans, reverse=True):
        resume = next((f'#line {n} "{f}"' for (f, n), i in layout.index.items() if i == end + 1), "")
        lines[start:end + 1] = [f"/* {name}: left out by the importer (the kernel does not call it) */",
                                *([resume] if resume else [])]
        removed.append(name)
    macros = analysis.kernel_macros
    if macros:
        pattern = re.compile(rf"^\s*#\s*define\s+({'|'.join(map(re.escape, macros))})\b")
        lines = [line + ("\n" + "\n".join(_macro_overrides((m.group(1),))) if (m := pattern.match(line)) else "")
                 for line in lines]
    narrowing = any(a.ctype.narrowed and a.is_array for a in analysis.args)
    banner = [f"/* {analysis.kernel} from {source_name}, imported by `refinery problems import`.",
              " *",
              " * The program's own text follows, unchanged except that its local headers are inlined where it",
              f" * includes them and the functions the kernel does not call are left out ({', '.join(removed[::-1])}).",
              f" * The entry point at the end, {entry_name(analysis)}, takes flat arrays and hands {analysis.kernel}",
              " * its own array types. */"]
    prelude = []
    if polybench:
        prelude.append("#define POLYBENCH_USE_C99_PROTO  /* array parameters take their sizes at run time */")
    if narrowing:
        prelude.append("#include <stdlib.h>")
    for macro in macros:
        prelude += [f"static int {MACRO_VARIABLE.format(macro)};  /* {macro}, set by the entry point on each call */",
                    *_macro_overrides((macro,))]
    if polybench:
        prelude += [f"#define {m} {v}  /* the same in every configuration */" for m, v in analysis.fixed_macros.items()]
    return "\n".join([*banner, *prelude, *lines]) + "\n" + _wrapper(analysis, intents)
