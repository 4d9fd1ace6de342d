"""One C program in, one problem folder out, every step that runs the program's code in the sandbox.

gather the files (`sources`) → preprocess and parse (`preprocess`) → find the kernel and its arguments
(`program`) → plan configurations (`configs`) → run the program at each, stopped at its kernel
(`capture`) → translate its initialisation (`numpy_init`) → write reference.c, inputs.py, the CUDA port
and problem.toml (`reference`, `inputs_module`, `cuda_port`, `writer`) → run the written problem as the
harness will, in the sandbox (`engine.untrusted.probe --c-check`): its inputs against the program's
own, its reference against the program's own kernel, its outputs finite on every check's inputs → compile
the port with nvcc. Each step that fails says which argument, configuration or construct and why.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from engine.problem_import.cimport.capture import CAPTURE_TIMEOUT_S, Capture, run_capture
from engine.problem_import.cimport.configs import DEFAULT_VISIBLE, plan_datasets, plan_written
from engine.problem_import.cimport.cuda_port import PortError, host_emulation, port_text
from engine.problem_import.cimport.inputs_module import inputs_text, random_initialisation
from engine.problem_import.cimport.numpy_expr import Untranslatable
from engine.problem_import.cimport.numpy_init import translate
from engine.problem_import.cimport.preprocess import parse
from engine.problem_import.cimport.program import Analysis, analyse, calls, ids, written_in_text
from engine.problem_import.cimport.reference import entry_name, entry_type, reference_text
from engine.problem_import.cimport.rounding import RoundingCheck, checks_from, rounding_warning, twin_flags
from engine.problem_import.cimport.sources import HEADER_HINT, CProgram, SourceError, gather
from engine.problem_import.cimport.writer import ArgRecord, ProblemRecord, write_problem
from engine.problems.library import AlreadyImported, ProblemError, load_problem
from engine.problems.model import Config, Problem

SCALE = (0.5, 1.5)
CHECK_SEEDS = (101, 202)
CHECK_TIMEOUT_S = 300
PRINTERS = {"printf", "fprintf", "puts", "fwrite", "fputs"}
ENTRY_DTYPES = {"int": "int32", "long": "int64", "float": "float32", "double": "float64"}


@dataclass(frozen=True)
class ImportOptions:
    """What the user may tell the importer that the program does not say."""

    includes: tuple[Path, ...] = ()  # folders holding local headers (polybench.h's utilities/)
    entry: str | None = None  # the kernel's name, where main calls several candidates
    sizes: dict[str, str] = field(default_factory=dict)  # argument -> element count expression
    defines: tuple[str, ...] = ()  # NAME[=VALUE] for the preprocessor (DATA_TYPE_IS_FLOAT)
    datasets: tuple[str, ...] = DEFAULT_VISIBLE  # PolyBench datasets shown
    compile_port: bool = True
    timeout_s: float = CAPTURE_TIMEOUT_S
    replace: bool = False  # a problem of the same slug imported before is replaced, not refused
    header_hint: str = HEADER_HINT  # what to do about a header not found, in the words of where the user is


@dataclass
class CImport:
    """One program's import: its problem or why not, what it noticed, and what it measured."""

    path: Path
    problem: Problem | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what limits judging candidates: the program's rounding
    rounding: dict[str, RoundingCheck] = field(default_factory=dict)  # per configuration, the reference's own drift
    seconds: dict[str, float] = field(default_factory=dict)  # the reference on the CPU, per configuration
    port_compiles: bool | None = None
    port_error: str = ""
    port_matches: bool | None = None  # the port, emulated on the CPU, gives the program's results everywhere
    folder: Path | None = None  # where the problem was written
    existing: str | None = None  # the slug of the problem imported before that this import left alone


def slug_for(program: CProgram) -> str:
    stem = re.sub(r"[^a-z0-9]+", "-", program.name.lower()).strip("-")
    return f"polybench-{stem}" if program.polybench else f"c-{stem}"


def _relevant(analysis: Analysis) -> set[str]:
    """The sizes an argument's length or value, or the kernel's own code, depends on."""
    names = set(analysis.kernel_macros)
    for arg in analysis.args:
        for text in (arg.size, arg.value):
            names |= set(re.findall(r"[A-Za-z_]\w*", text or "")) & set(analysis.sizes)
    return names


def _split_macros(analysis: Analysis, runs) -> Analysis:
    """Size macros the kernel reads: those the configurations vary are passed at run time (`size_N`); the others
    keep their one value, as the program writes it."""
    varying = tuple(m for m in analysis.kernel_macros if len({c.params.get(m) for c, _ in runs}) > 1)
    fixed = {m: runs[0][0].params[m] for m in analysis.kernel_macros if m not in varying}
    return replace(analysis, kernel_macros=varying, fixed_macros=fixed)


def _reason(capture: Capture, kernel: str) -> str | None:
    if not capture.ok:
        return capture.error
    bad = capture.non_finite()
    return f"{kernel} leaves NaN or infinity in {', '.join(bad)}" if bad else None


def _capture_all(analysis: Analysis, program: CProgram, flags: list[str], options: ImportOptions,
                 notes: list[str]) -> list[tuple[Config, Capture]]:
    """Each place's first configuration that runs (the required one first, probing intents)."""
    if program.datasets:
        places = plan_datasets(program.datasets, options.datasets)
    else:
        places = plan_written(analysis.sizes, _relevant(analysis))
    macros = set(program.macros)
    written = frozenset(written_in_text(analysis))
    order = sorted(range(len(places)), key=lambda i: places[i].role != "required")
    chosen: dict[int, tuple[Config, Capture]] = {}
    for i in order:
        place = places[i]
        for config in place.choices:
            capture = run_capture(analysis, program.bundle, config.name, config.params, flags, macros,
                                  intents=place.role == "required", timeout_s=options.timeout_s,
                                  polybench=program.polybench, written=written)
            why = _reason(capture, analysis.kernel)
            if why is None:
                chosen[i] = (config, capture)
                break
            if place.role == "required":
                raise SourceError(f"{program.path}: configuration {config.name!r} ({_params(config.params)}): {why}")
            notes.append(f"{program.path}: configuration {config.name!r} ({_params(config.params)}) does not run "
                         f"({why}); {'the next choice is tried' if config is not place.choices[-1] else 'dropped'}")
    return [chosen[i] for i in sorted(chosen)]


def _params(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items())


def _scalar_values(analysis: Analysis, runs: list[tuple[Config, Capture]]) -> dict[str, str]:
    """Each scalar's value over the parameters: as main writes it, else found in the runs: a constant, a
    parameter it always equals, or a parameter of its own added to every configuration."""
    values = {}
    for arg in analysis.args:
        if arg.is_array:
            continue
        if arg.value is not None:
            values[arg.name] = arg.value
            continue
        seen = [capture.scalars[arg.name] for _, capture in runs]
        same_param = next((p for p in runs[0][0].params
                           if all(c.params.get(p) == v for (c, _), v in zip(runs, seen, strict=True))), None)
        if all(v == seen[0] for v in seen):
            values[arg.name] = repr(float(seen[0])) if arg.ctype.is_float else str(int(seen[0]))
        elif same_param is not None:
            values[arg.name] = same_param
        else:
            name = arg.name if arg.name not in runs[0][0].params else f"{arg.name}_value"
            for (config, _), value in zip(runs, seen, strict=True):
                config.params[name] = value
            values[arg.name] = name
    return values


def _printed(analysis: Analysis) -> set[str] | None:
    """The kernel's arrays main hands to a function after the call (PolyBench's print_array): its results."""
    main = analysis.unit.functions["main"].body.block_items or []
    after = False
    used: set[str] = set()
    for item in main:
        if after:
            for call in calls(item):
                if call.name.name in analysis.unit.functions or call.name.name in PRINTERS:
                    used |= ids(call.args) if call.args else set()
        after = after or _contains(item, analysis.call)
    if not used:
        return None
    passed = {a.name: ids(given) for a, given in zip(analysis.args, analysis.call.args.exprs, strict=True)}
    return {name for name, names in passed.items() if names & used}


def _contains(node, target) -> bool:
    return node is target or any(_contains(child, target) for _, child in node.children())


def _record(program: CProgram, analysis: Analysis, runs, intents, values, inputs, port) -> ProblemRecord:
    args = []
    for arg in analysis.args:
        intent = intents.get(arg.name, "inout") if arg.is_array else "in"
        size = arg.size if arg.is_array else None
        args.append(ArgRecord(arg.name, entry_type(arg, intent), values.get(arg.name), size, intent))
    args += [ArgRecord(f"size_{m}", "int", m) for m in analysis.kernel_macros]
    outputs = [a for a in analysis.args if a.is_array and intents.get(a.name, "inout") != "in"]
    dtype = next((ENTRY_DTYPES[a.ctype.entry] for a in outputs if a.ctype.is_float),
                 ENTRY_DTYPES[outputs[0].ctype.entry] if outputs else "float64")
    arrays = ", ".join(f"{a.name} ({intents.get(a.name, 'inout')})" for a in analysis.args if a.is_array)
    scalars = ", ".join(f"{n} = {v}" for n, v in values.items())
    suite = " (PolyBench/C)" if program.polybench else ""
    description = (f"{analysis.kernel} of {program.path.name}{suite}, imported with the program's own initialisation. "
                   f"Arrays: {arrays}." + (f" Scalars: {scalars}." if scalars else ""))
    configs = [(c.name, c.hidden, dict(c.params)) for c, _ in runs]
    tags = ["imported", "c-program"] + (["polybench"] if program.polybench else [])
    title = f"{program.name} ({'PolyBench/C' if program.polybench else 'C program'})"
    return ProblemRecord(slug_for(program), title, description, tags, dtype, entry_name(analysis), args, configs,
                         reference_text(analysis, program.bundle, program.path.name, program.polybench, intents),
                         inputs, port)


def _own_inputs(analysis: Analysis, sizes: list[str], runs, intents, notes: list[str], path: Path,
                scale: tuple[float, float] | None, forced: str | None) -> str:
    """inputs.py: the program's initialisation translated, or (where it cannot be, or `forced` says why the
    translation is wrong) random values in the ranges the program's own take, with a note saying so."""
    arrays = {a.name: ENTRY_DTYPES[a.ctype.entry] for a in analysis.args if a.is_array}
    scaled = [a.name for a in analysis.args if a.is_array and a.ctype.is_float and intents.get(a.name) != "out"]
    try:
        if forced:
            raise Untranslatable(forced)
        own = translate(analysis, sizes)
        note = ""
    except Untranslatable as exc:
        ranges = {}
        for a in analysis.args:
            if a.is_array and intents.get(a.name) == "out":
                ranges[a.name] = (a.size, arrays[a.name], 0, 0)  # never read: zeros
            elif a.is_array:
                values = np.concatenate([c.before[a.name] for _, c in runs])
                finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values
                low, high = (finite.min().item(), finite.max().item()) if finite.size else (0, 0)
                ranges[a.name] = (a.size, arrays[a.name], low, high)
        own = random_initialisation(sizes, ranges, str(exc))
        note = f"The program's initialisation could not be translated ({exc}): inputs are random in its ranges."
        if f"{path}: {note}" not in notes:
            notes.append(f"{path}: {note}")
    return inputs_text(path.name, analysis.kernel, own, arrays, scaled, scale, note)


def _probe_files(problem: Problem, runs) -> dict[str, bytes]:
    """inputs.py, the program's own arrays before and after its kernel, and the spec the probe reads."""
    import io

    from engine.problems.c_args import arg_specs

    files = {"inputs.py": problem.inputs_path.read_bytes()}
    configs = []
    for config, capture in runs:
        specs = [s.__dict__ for s in arg_specs(problem, problem.config(config.name))]
        configs.append({"name": config.name, "params": dict(problem.config(config.name).params), "args": specs,
                        "seeds": list(CHECK_SEEDS)})
        for kind, arrays in (("before", capture.before), ("after", capture.after)):
            for name, array in arrays.items():
                buffer = io.BytesIO()
                np.save(buffer, array)
                files[f"{kind}_{config.name}_{name}.npy"] = buffer.getvalue()
    files["spec.json"] = json.dumps({"entry": problem.entry, "configs": configs,
                                     "tolerance": list(problem.tolerance)}).encode()
    return files


def _build(source: str, what: str, extra: tuple[str, ...] = ()) -> bytes:
    from engine.compilation.c import compile_c_library

    with tempfile.TemporaryDirectory() as cache:
        build = compile_c_library(source, Path(cache), extra)
        if not build.ok:
            first = next((ln for ln in build.log.splitlines() if "error" in ln), build.log.strip()[:300])
            raise SourceError(f"{what} does not compile: {first}")
        return build.output.read_bytes()


def _check(problem: Problem, runs) -> dict:
    """The written problem run as the harness will, in the sandbox (engine.untrusted.probe --c-check), beside
    its twin built to round otherwise (`engine.problem_import.cimport.rounding`)."""
    from engine.problem_import.probe import _probe

    files = _probe_files(problem, runs)
    files["reference.so"] = _build(problem.reference_source, "the generated reference")
    files["rounded.so"] = _build(problem.reference_source, "the generated reference, built to round otherwise",
                                 twin_flags()[0])
    result, why = _probe(files, ["--c-check", "{scratch}"], CHECK_TIMEOUT_S)
    if result is None:
        raise SourceError(f"checking the imported problem failed: {why}")
    return result["configs"]


def _check_port(problem: Problem, runs) -> tuple[bool, str]:
    """(whether the CUDA port, emulated on the CPU, gives the program's own results everywhere, why not)."""
    from engine.problem_import.probe import _probe

    files = _probe_files(problem, runs)
    spec = json.loads(files["spec.json"])
    files["spec.json"] = json.dumps({**spec, "port": True}).encode()
    try:
        files["port.so"] = _build(host_emulation((problem.folder / "impls" / "naive.cu").read_text()),
                                  "emulated on the CPU, it")
    except SourceError as exc:
        return False, str(exc)
    result, why = _probe(files, ["--c-check", "{scratch}"], CHECK_TIMEOUT_S)
    if result is None:
        return False, f"emulated on the CPU, it {why}"
    wrong = {n: sorted(c["output_mismatch"]) for n, c in result["configs"].items() if c.get("output_mismatch")}
    errors = [f"{n}: {c['error']}" for n, c in result["configs"].items() if c.get("error")]
    if errors or wrong:
        where = ", ".join(f"{k}: {v}" for k, v in wrong.items())
        return False, "emulated on the CPU, it " + "; ".join(errors or [f"differs from the program's results: {where}"])
    return True, ""


def _compile_port(problem: Problem) -> tuple[bool, str]:
    from engine.compilation.cuda import compile_shared_library
    from engine.settings import get_settings
    from engine.toolchain import ToolMissing

    source = (problem.folder / "impls" / "naive.cu").read_text()
    try:
        with tempfile.TemporaryDirectory() as cache:
            build = compile_shared_library(source, get_settings().gpu_arch, Path(cache))
    except ToolMissing as exc:
        return False, str(exc)
    first = "" if build.ok else next((ln for ln in build.log.splitlines() if "error" in ln), build.log[-300:])
    return build.ok, first


def import_program(path: Path, dest_root: Path, options: ImportOptions = ImportOptions()) -> CImport:
    """Import the program whose main is in `path` into `dest_root/c/<slug>`; on failure nothing is left there."""
    import shutil

    result = CImport(Path(path))
    try:
        _import(result, dest_root, options)
    except (SourceError, ProblemError) as exc:
        result.existing = exc.slug if isinstance(exc, AlreadyImported) else None
        result.error = exc.cause if isinstance(exc, ProblemError) else str(exc).removeprefix(f"{path}: ")
        result.problem = None
        if result.folder is not None:
            shutil.rmtree(result.folder, ignore_errors=True)
    return result


def _import(result: CImport, dest_root: Path, options: ImportOptions) -> None:
    program = gather(result.path, options.includes, options.header_hint)
    existing = Path(dest_root) / "c" / slug_for(program)
    if existing.exists() and not options.replace:
        raise AlreadyImported(result.path, slug_for(program), existing)
    flags = (["-DPOLYBENCH_USE_C99_PROTO"] if program.polybench else []) + [f"-D{d}" for d in options.defines]
    symbolic = list(dict.fromkeys([*(k for d in program.datasets.values() for k in d), *program.macros]))
    unit = parse(program, flags, symbolic)
    analysis = analyse(program, unit, options.entry, options.sizes)
    notes = result.notes
    runs = _capture_all(analysis, program, flags, options, notes)
    analysis = _split_macros(analysis, runs)
    probed = next((c.intents for _, c in runs if c.intents), {})
    intents = {a.name: probed.get(a.name, "inout") for a in analysis.args if a.is_array}
    values = _scalar_values(analysis, runs)
    sizes = list(dict.fromkeys(k for c, _ in runs for k in c.params if k in analysis.sizes))
    printed = _printed(analysis)
    scratch = [n for n, i in intents.items() if i != "in" and printed is not None and n not in printed]
    if scratch:
        notes.append(f"{result.path}: {', '.join(scratch)} {'is' if len(scratch) == 1 else 'are'} written by "
                     f"{analysis.kernel} but main never prints {'it' if len(scratch) == 1 else 'them'} (scratch?); "
                     "compared like every output")
    try:
        port, port_note = port_text(analysis, intents, program.path.name), ""
    except PortError as exc:
        port, port_note = None, f"no CUDA port: {exc}"
        notes.append(f"{result.path}: {port_note}")
    scale, forced = SCALE, None
    for _attempt in range(3):
        inputs = _own_inputs(analysis, sizes, runs, intents, notes, result.path, scale, forced)
        record = _record(program, analysis, runs, intents, values, inputs, port)
        result.folder = write_problem(record, dest_root)
        problem = load_problem(result.folder, source="import")
        checked = _check(problem, runs)
        differs = sorted({a for c in checked.values() for a in c.get("init_mismatch", {})})
        non_finite = {n: c["non_finite"] for n, c in checked.items() if c.get("non_finite")}
        if differs and forced is None:
            forced = f"the translation differs from the program's {', '.join(differs)}"
        elif non_finite and scale is not None:
            notes.append(f"{result.path}: scaling the inputs made {analysis.kernel} produce NaN or infinity "
                         f"({'; '.join(f'{k}: {v}' for k, v in non_finite.items())}): every check uses the program's "
                         "own values (SCALE = None in inputs.py)")
            scale = None
        else:
            break
    _judge_check(checked, analysis)
    result.seconds = {n: c["seconds"] for n, c in checked.items() if c.get("seconds") is not None}
    result.rounding = checks_from(checked)
    warning = rounding_warning(analysis.kernel, result.rounding, problem.tolerance, twin_flags()[1])
    if warning:
        result.warnings.append(f"{result.path}: {warning}")
        record.rounding = {n: c.sensitive for n, c in result.rounding.items() if c.sensitive}
        record.tags.append("rounding-sensitive")
    sensitive = {n: c["sensitive"] for n, c in checked.items() if c.get("sensitive") and n not in record.rounding}
    if sensitive:
        rtol, atol = problem.tolerance
        where = "; ".join(f"{n}: {', '.join(f'{k} ({v} elements)' for k, v in c.items())}"
                          for n, c in sensitive.items())
        notes.append(f"{result.path}: outputs move beyond the tolerance (rtol {rtol:g}, atol {atol:g}) when the inputs "
                     f"move by a few units in the last place ({where}): a correct candidate that rounds differently "
                     "(a GPU's fused multiply-add) may be judged incorrect there; choose other sizes (--datasets) or "
                     "loosen rtol/atol in problem.toml")
    if port is not None:
        why = _port_problem(problem, runs, options, result)
        if why:
            notes.append(f"{result.path}: the CUDA port {why}; it is left out")
            record.port = None
    ints = [a.name for a in analysis.args if a.is_array and not a.ctype.is_float and intents.get(a.name) != "out"]
    if ints:
        notes.append(f"{result.path}: integer inputs ({', '.join(ints)}) are the program's own on every check "
                     "(only floating-point inputs are scaled)")
    record.notes = [n.removeprefix(f"{result.path}: ") for n in notes]
    record.warnings = [w.removeprefix(f"{result.path}: ") for w in result.warnings]
    result.problem = load_problem(write_problem(record, dest_root), source="import")


def _port_problem(problem: Problem, runs, options: ImportOptions, result: CImport) -> str | None:
    """Why the generated port cannot stay (it does not compile, or emulated on the CPU it is wrong), or None."""
    if options.compile_port:
        result.port_compiles, result.port_error = _compile_port(problem)
        if not result.port_compiles:
            return f"does not compile ({result.port_error})"
    result.port_matches, why = _check_port(problem, runs)
    if not result.port_matches:
        return why.split("): ")[0] + ")" if "crashed (" in why else why
    return None


def _judge_check(checked: dict, analysis: Analysis) -> None:
    for name, outcome in checked.items():
        where = f"configuration {name!r}"
        if outcome.get("error"):
            raise SourceError(f"{where}: {outcome['error']}")
        if outcome["output_mismatch"]:
            raise SourceError(f"{where}: the generated reference gives other results than the program's own "
                              f"{analysis.kernel} for {', '.join(outcome['output_mismatch'])} (largest difference "
                              f"{max(outcome['output_mismatch'].values()):.3g})")
        if outcome["non_finite"]:
            raise SourceError(f"{where}: {analysis.kernel} produces NaN or infinity in "
                              f"{', '.join(outcome['non_finite'])} on the program's own inputs")


def import_c(path: Path, dest_root: Path, options: ImportOptions = ImportOptions()) -> list[CImport]:
    """Every program (a `.c` file with main) at `path`, imported one by one."""
    from engine.problem_import.cimport.sources import find_programs

    return [import_program(p, dest_root, options) for p in find_programs(Path(path))]
