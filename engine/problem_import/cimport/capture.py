"""The program run as its author runs it, once per configuration, in the sandbox, stopped at its kernel.

A driver is the program's own text with the configuration's sizes set (a `-D` for PolyBench's dataset
macros; the written value replaced for a plain `#define` or a size variable of main) and one addition:
just before `main`, the kernel's name is redefined to a capture function with the same parameters. So main
allocates and initialises exactly as it always does, then hands everything to the capture, which writes
the arguments as main made them, runs the real kernel (timed), writes the arrays again and exits, before
main prints anything. At the configuration that probes intents it also reruns the kernel with each array it
writes (changed by the run, or assigned in the kernel's text) filled with other values: if nothing comes
out different, the kernel never reads that array (`out`); otherwise it is `inout`; the others are `in`.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.compilation.sandboxed import SCRATCH, compile_sandboxed
from engine.problem_import.cimport.layout import Layout
from engine.problem_import.cimport.program import Analysis, c_text
from engine.problems.expressions import evaluate
from engine.sandbox.launch import FLOOD_BYTES

C_COMPILER = "cc"
CAPTURE_TIMEOUT_S = 180
CAPTURE_NAME = "refinery_capture"
# PolyBench's allocator, zeroed: its own leaves memory the program never writes undefined, and the inputs
# made at check time hold zeros there (what a fresh page holds, and what calloc gives).
POLYBENCH_RUNTIME = """
void *polybench_alloc_data(unsigned long long int n, int elt_size)
{
    void *p = calloc(n, elt_size);
    if (!p) { fprintf(stderr, "capture: out of memory\\n"); exit(2); }
    return p;
}
void polybench_free_data(void *ptr) { free(ptr); }
void polybench_flush_cache() {}
void polybench_prepare_instruments() {}
"""


@dataclass
class Capture:
    """One configuration's run: the arguments as main made them, the arrays after the kernel, its time."""

    config: str
    ok: bool
    error: str = ""
    scalars: dict[str, float | int] = field(default_factory=dict)
    before: dict[str, np.ndarray] = field(default_factory=dict)
    after: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float | None = None
    intents: dict[str, str] = field(default_factory=dict)

    def non_finite(self) -> list[str]:
        """The arrays the kernel left holding NaN or infinity."""
        return [name for name, array in self.after.items()
                if array.dtype.kind == "f" and not bool(np.isfinite(array).all())]


def _set_sizes(analysis: Analysis, layout: Layout, params: dict[str, int], macros: set[str]) -> list[str]:
    lines = list(layout.lines)
    for i, line in enumerate(lines):
        match = re.match(r"^(\s*#\s*define\s+([A-Za-z_]\w*))\b.*$", line)
        if match and match.group(2) in macros and match.group(2) in params:
            lines[i] = f"{match.group(1)} {params[match.group(2)]}"
    for name, decl in analysis.main_sizes.items():
        if name not in params:
            continue
        i = layout.at(decl.coord)
        lines[i] = re.sub(rf"\b({re.escape(name)}\s*=\s*)[^,;]+", rf"\g<1>{params[name]}", lines[i], count=1)
    return lines


def _capture_function(analysis: Analysis, counts: dict[str, int], written: set[str]) -> str:
    kernel = analysis.unit.functions[analysis.kernel]
    params = ", ".join(c_text(p) for p in kernel.decl.type.args.params)
    arrays = [a for a in analysis.args if a.is_array]
    call = f"{analysis.kernel}({', '.join(a.name for a in analysis.args)});"

    def nbytes(a) -> str:
        return f"((size_t){counts[a.name]} * sizeof({a.ctype.spelled}))"

    out = [f"static void {CAPTURE_NAME}({params})", "{",
           '    FILE *info = fopen("capture.txt", "w"), *pre = fopen("pre.bin", "wb"),',
           '         *post = fopen("post.bin", "wb");',
           "    struct timespec refinery_t0, refinery_t1;",
           '    if (!info || !pre || !post) { fprintf(stderr, "capture: cannot write its files\\n"); exit(3); }']
    for a in analysis.args:
        if a.is_array:
            out.append(f"    fwrite({a.name}, 1, {nbytes(a)}, pre);")
        else:
            out.append(f"    fwrite(&{a.name}, sizeof({a.name}), 1, pre);")
    out += ["#ifdef REFINERY_INTENTS"]
    for a in arrays:
        out.append(f"    void *keep_{a.name} = malloc({nbytes(a)}); memcpy(keep_{a.name}, {a.name}, {nbytes(a)});")
    out += ["#endif", "    clock_gettime(CLOCK_MONOTONIC, &refinery_t0);", f"    {call}",
            "    clock_gettime(CLOCK_MONOTONIC, &refinery_t1);",
            '    fprintf(info, "seconds %.9f\\n", (refinery_t1.tv_sec - refinery_t0.tv_sec) + '
            "1e-9 * (refinery_t1.tv_nsec - refinery_t0.tv_nsec));"]
    for a in arrays:
        out.append(f"    fwrite({a.name}, 1, {nbytes(a)}, post);")
    out.append("#ifdef REFINERY_INTENTS")
    for a in arrays:
        out.append(f"    void *result_{a.name} = malloc({nbytes(a)}); memcpy(result_{a.name}, {a.name}, {nbytes(a)});")
    for a in arrays:
        restore = " ".join(f"memcpy({b.name}, keep_{b.name}, {nbytes(b)});" for b in arrays)
        same = " && ".join(f"memcmp({b.name}, result_{b.name}, {nbytes(b)}) == 0" for b in arrays)
        unchanged = "0" if a.name in written else f"memcmp(keep_{a.name}, result_{a.name}, {nbytes(a)}) == 0"
        out += [f"    if ({unchanged}) "
                f'fprintf(info, "intent {a.name} in\\n");',
                "    else {",
                f"        {restore}",
                f"        for (size_t i = 0; i < (size_t){counts[a.name]}; i++) "
                f"(({a.ctype.spelled} *){a.name})[i] = ({a.ctype.spelled})3.25;",
                f"        {call}",
                f'        fprintf(info, "intent {a.name} %s\\n", ({same}) ? "out" : "inout");',
                "    }"]
    out += ["#endif", "    fclose(info); fclose(pre); fclose(post);", "    exit(0);", "}",
            f"#define {analysis.kernel} {CAPTURE_NAME}"]
    return "\n".join(out)


def driver(analysis: Analysis, bundle: str, params: dict[str, int], macros: set[str], polybench: bool = False,
           written: frozenset[str] = frozenset()) -> str:
    """The program with the configuration's sizes and the capture before main."""
    layout = Layout(bundle)
    counts = {a.name: int(evaluate(a.size, params)) for a in analysis.args if a.is_array}
    lines = _set_sizes(analysis, layout, params, macros)
    start, _ = layout.function_span(analysis.unit.functions["main"])
    head = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <time.h>\n"
    tail = POLYBENCH_RUNTIME if polybench else ""
    body = lines[:start] + [_capture_function(analysis, counts, set(written))] + lines[start:]
    return head + "\n".join(body) + "\n" + tail


def _read(folder: Path, analysis: Analysis, params: dict[str, int], config: str) -> Capture:
    capture = Capture(config, ok=True)
    for line in (folder / "capture.txt").read_text().splitlines():
        parts = line.split()
        if parts[0] == "seconds":
            capture.seconds = float(parts[1])
        elif parts[0] == "intent":
            capture.intents[parts[1]] = parts[2]
    pre, post = (folder / "pre.bin").read_bytes(), (folder / "post.bin").read_bytes()
    at = back = 0
    for a in analysis.args:
        dtype = np.dtype(a.ctype.dtype)
        count = int(evaluate(a.size, params)) if a.is_array else 1
        value = np.frombuffer(pre, dtype, count, at).copy()
        at += count * dtype.itemsize
        if not a.is_array:
            capture.scalars[a.name] = value[0].item()
            continue
        capture.before[a.name] = value
        capture.after[a.name] = np.frombuffer(post, dtype, count, back).copy()
        back += count * dtype.itemsize
    return capture


def run_capture(analysis: Analysis, bundle: str, config: str, params: dict[str, int], flags: list[str],
                macros: set[str], intents: bool = False, timeout_s: float = CAPTURE_TIMEOUT_S,
                polybench: bool = False, written: frozenset[str] = frozenset()) -> Capture:
    """Compile and run the driver at one configuration in the sandbox."""
    cc = shutil.which(C_COMPILER) or C_COMPILER
    defines = [f"-D{k}={v}" for k, v in params.items() if k not in macros and k not in analysis.main_sizes]
    if intents:
        defines.append("-DREFINERY_INTENTS")
    command = (f"{cc} -O2 -std=gnu11 -w {' '.join(flags + defines)} -o {SCRATCH}/driver {SCRATCH}/driver.c -lm "
               f"&& cd {SCRATCH} && ./driver")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        outputs = {name: out / name for name in ("capture.txt", "pre.bin", "post.bin")}
        source = driver(analysis, bundle, params, macros, polybench, written)
        done = compile_sandboxed(["/bin/sh", "-c", command], {"driver.c": source}, outputs, timeout_s)
        if not done.ok:
            lines = done.log.strip().splitlines()
            first = next((ln for ln in lines if "error" in ln), " | ".join(lines[-3:]) or "no output")
            if done.timed_out:
                first = f"did not finish in {timeout_s:.0f} s"
            elif done.flooded:
                first = f"stopped after printing more than {FLOOD_BYTES >> 20} MiB"
            return Capture(config, ok=False, error=first)
        return _read(out, analysis, params, config)
