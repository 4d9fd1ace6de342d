"""`analyse_candidate`: everything that can be learned about a candidate without a GPU, in about a second.

One nvcc build (cached by content, shared with the verifier's cache) gives the ptxas resource log
and the cubin; one nvdisasm call gives the SASS of all kernels; tree-sitter gives the source
structure, the launch configuration and the per-warp address estimates. Each step that cannot
run (no parser, no disassembler, a compile error) leaves a note and the rest still reports.
"""

from __future__ import annotations

import ast
import contextlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine import python_ast
from engine.analysis.binary.occupancy import REPORTED_ARCHS, arch_limits, theoretical_occupancy
from engine.analysis.binary.ptxas import KernelResources, demangle_kernel_name, parse_ptxas_log
from engine.analysis.binary.sass import DisassemblyError, InstructionMix, disassemble, parse_sass
from engine.analysis.record import KernelReport, StaticReport, build_features
from engine.analysis.source import cuda_ast
from engine.analysis.source.access import estimate_accesses
from engine.analysis.source.control import estimate_control
from engine.analysis.source.evaluator import Env, Evaluator, Unknown
from engine.analysis.source.host import unit_macros
from engine.analysis.source.launch import (
    LaunchConfig,
    LaunchSite,
    cuda_launch_sites,
    launch_for,
    launches_per_call,
    python_launch_sites,
    reference_inputs,
)
from engine.analysis.source.layouts import struct_layouts
from engine.analysis.source.source_features import source_features
from engine.compilation.cuda import compile_cubin
from engine.compilation.extract import cuda_sources_from_python
from engine.problems.expressions import ExpressionError, evaluate
from engine.toolchain import ToolMissing

# tensor methods and torch functions that move no data of their own (allocation, views, metadata)
_FREE_TORCH_CALLS = {"empty", "empty_like", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
                     "contiguous", "view", "reshape", "size", "numel", "data_ptr", "stride", "dim", "flatten",
                     "unsqueeze", "squeeze", "permute", "transpose", "t", "expand", "as_strided", "is_contiguous",
                     "current_stream", "cuda_stream", "device", "dtype", "element_size", "new_empty", "view_as",
                     "get_device", "synchronize", "no_grad", "ExternalStream", "Stream", "int32", "int64",
                     "float32", "item", "tolist", "chunk", "split", "narrow", "storage_offset"}


@dataclass
class _Unit:
    """One CUDA translation unit of the candidate and what was learned from it."""

    source: str
    log: str = ""
    ok: bool = False
    compile_seconds: float = 0.0  # 0 when the build came from the cache
    resources: dict[str, KernelResources] = field(default_factory=dict)
    mixes: dict[str, InstructionMix] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _compile(source: str, arch: str, cache_dir: Path) -> _Unit:
    unit = _Unit(source)
    try:
        build = compile_cubin(source, arch, cache_dir)
    except ToolMissing as exc:
        unit.notes.append(f"not compiled: {exc}")
        return unit
    unit.log, unit.ok, unit.compile_seconds = build.log, build.ok, build.seconds
    if not build.ok:
        unit.notes.append("compile error: " + _first_error(build.log))
        return unit
    unit.resources = parse_ptxas_log(build.log)
    try:
        unit.mixes = parse_sass(disassemble(build.output))
    except (DisassemblyError, OSError) as exc:
        unit.notes.append(f"no SASS: {exc}")
    return unit


def _first_error(log: str) -> str:
    for line in log.splitlines():
        if "error" in line.lower():
            return line.strip()[:300]
    return log.strip().splitlines()[-1][:300] if log.strip() else "nvcc failed"


_TORCH_COMPUTE_METHODS = {"sum", "mean", "relu", "matmul", "mm", "bmm", "softmax", "exp", "add", "mul", "sub", "div",
                          "clamp", "sigmoid", "tanh", "max", "min", "norm", "pow", "sqrt", "addmm", "gelu", "abs"}


def _is_torch_compute(call: ast.Call) -> bool:
    name = ast.unparse(call.func)
    last = name.rsplit(".", 1)[-1]
    if last in _FREE_TORCH_CALLS or name.startswith(("cp.", "cupy.")):
        return False
    if name.startswith(("torch.cuda.", "torch.backends.", "torch.utils.", "torch.device", "torch.Size",
                        "torch.manual_seed", "torch.no_grad", "torch.get_", "torch.is_", "torch.set_")):
        return False
    if name.startswith(("torch.", "F.", "nn.functional.", "torch.nn.functional.")):
        return True
    return isinstance(call.func, ast.Attribute) and last in _TORCH_COMPUTE_METHODS


def torch_ops_in_forward(source: str) -> int:
    """torch compute calls in ModelNew.forward other than allocation and views: each is a kernel of its own."""
    try:
        tree = python_ast.parse(source)
    except SyntaxError:
        return 0
    count = 0
    for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "ModelNew"):
        for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward"):
            count += sum(1 for n in ast.walk(fn) if isinstance(n, ast.Call) and _is_torch_compute(n))
    return count


def _kernel_names(sources: list[str]) -> set[str]:
    if not cuda_ast.parser_available():
        return set()
    return {k.name for s in sources for k in cuda_ast.kernels(cuda_ast.parse(s).root_node)}


def _host_scalars(problem, params: dict) -> dict[str, int | float]:
    """Values of a C problem's scalar arguments at the configuration (the host entry's parameters)."""
    values: dict[str, int | float] = {}
    for arg in getattr(problem, "args", ()) or ():
        if not arg.is_array and arg.value is not None:
            with contextlib.suppress(ExpressionError):
                values[arg.name] = evaluate(arg.value, params)
    return values


def _template_value(argument: str, macros: dict[str, cuda_ast.Macro]) -> int | None:
    """`32`, `TILE` (a #define or constant) or `BM / 2`: a template argument's value, if it is a number."""
    with contextlib.suppress(ValueError):
        return int(argument)
    node = cuda_ast.parse_expression(argument)
    if node is None:
        return None
    try:
        value = Evaluator(1, macros).vector(node, Env())
    except (Unknown, TypeError, ValueError, ZeroDivisionError):
        return None
    return int(value[0]) if value.dtype.kind in "iu" else None


def _kernel_scalars(kernel: cuda_ast.FunctionDef, sites: list[LaunchSite], params: dict,
                    host: dict, macros: dict[str, cuda_ast.Macro] | None = None) -> dict[str, int | float]:
    """Kernel parameter values: from the launch's arguments, else a configuration parameter of the same name;
    template arguments from the launch (`k<TILE><<<...>>>`), else the template's defaults."""
    scalars: dict[str, int | float] = {}
    macros = macros or {}
    for name, default in kernel.template_defaults.items():
        if (value := _template_value(default, macros)) is not None:
            scalars[name] = value
    lowered = {str(k).lower(): v for k, v in {**params, **host}.items()}
    for param in kernel.params:
        if param.is_pointer:
            continue
        for name in (param.name, param.name.lower()):
            if name in host or name in params or name in lowered:
                scalars[param.name] = host.get(name, params.get(name, lowered.get(name)))
                break
    site = next((s for s in sites if s.kernel == kernel.name), None)
    if site is not None:
        for index, value in site.scalar_args.items():
            if index < len(kernel.params) and not kernel.params[index].is_pointer:
                scalars[kernel.params[index].name] = value
        for name, arg in zip(kernel.template_params, site.template_args, strict=False):
            if (value := _template_value(arg, macros)) is not None:
                scalars[name] = value
    return scalars


def _kernel_report(kernel: cuda_ast.FunctionDef | None, symbol: str, unit: _Unit, launch: LaunchConfig, arch: str,
                   archs: tuple[str, ...]) -> KernelReport:
    name = kernel.name if kernel is not None else demangle_kernel_name(symbol)
    report = KernelReport(name=name, symbol=symbol, launch=launch, resources=unit.resources.get(symbol),
                          mix=unit.mixes.get(symbol))
    if report.resources is not None:
        r = report.resources
        for target in dict.fromkeys((*archs, arch.rstrip("a"))):
            try:
                report.occupancy[arch_limits(target).arch] = theoretical_occupancy(
                    target, r.registers, launch.threads, r.smem_bytes, launch.dynamic_smem,
                    barriers=max(1, r.barriers))
            except KeyError:
                continue
    return report


def analyse_candidate(problem, source: str, language: str, config=None, *, arch: str | None = None,
                      cache_dir: Path | None = None, block: tuple[int, int, int] | None = None,
                      archs: tuple[str, ...] = REPORTED_ARCHS,
                      fixed: dict[str, int | float] | None = None) -> StaticReport:
    """Static diagnostics of one candidate (`language`: cuda | python | c) at one configuration.

    `problem` may be None (a bare kernel); `config` defaults to the problem's largest; `block`
    overrides the block shape of every kernel (for a kernel whose launch is computed at run time);
    `fixed` names values that hold wherever the source defines or declares them (`#define N`, a
    constant, a host local, a parameter): the sizes given to `refinery analyze`.
    """
    started = time.perf_counter()
    if arch is None or cache_dir is None:
        from engine.settings import get_settings

        settings = get_settings()
        arch, cache_dir = arch or settings.gpu_arch, cache_dir or settings.cache_dir
    if config is None and problem is not None and problem.configs:
        config = problem.largest_config
    params = dict(config.params) if config is not None else {}
    flops = problem.flops(config) if problem is not None and config is not None else None
    min_bytes = problem.min_bytes(config) if problem is not None and config is not None else None
    elem_bytes = cuda_ast.DTYPE_BYTES.get(getattr(problem, "dtype", "float32"), 4)
    notes: list[str] = []

    if language == "c":
        return StaticReport(True, language, arch, [], build_features([], arch, 0, 0, _ai(flops, min_bytes)),
                            ["a CPU candidate: no GPU diagnostics"], seconds=time.perf_counter() - started,
                            config=getattr(config, "name", None), flops=flops, min_bytes=min_bytes)
    py_sites: list[LaunchSite] = []
    torch_ops = 0
    if language == "python":
        extracted = cuda_sources_from_python(source)
        sources, notes = list(extracted.sources), list(extracted.notes)
        inputs = reference_inputs(problem.reference_source, params) if getattr(problem, "kind", "") == "pytorch" \
            else None
        py_sites = python_launch_sites(source, _kernel_names(sources), params, inputs, notes=notes)
        torch_ops = torch_ops_in_forward(source)
    else:
        sources = [source]

    with ThreadPoolExecutor(max_workers=max(1, len(sources))) as pool:
        units = list(pool.map(lambda s: _compile(s, arch, cache_dir), sources))
    host = _host_scalars(problem, params)
    kernels: list[KernelReport] = []
    all_sites = list(py_sites)
    for unit in units:
        notes.extend(unit.notes)
        reports, sites = _analyse_unit(unit, py_sites, host, params, arch, archs, block, elem_bytes, notes,
                                       fixed or {})
        kernels.extend(reports)
        all_sites += sites
    launch_sites = launches_per_call(all_sites)
    features = build_features(kernels, arch, launch_sites, torch_ops, _ai(flops, min_bytes))
    ok = bool(units) and all(u.ok for u in units)
    return StaticReport(ok=ok, language=language, arch=arch, kernels=kernels, features=features,
                        notes=list(dict.fromkeys(notes)), compile_log="\n".join(u.log for u in units),
                        seconds=time.perf_counter() - started, config=getattr(config, "name", None),
                        flops=flops, min_bytes=min_bytes, launches_per_call=launch_sites,
                        compile_seconds=sum(u.compile_seconds for u in units))


def _ai(flops: float | None, min_bytes: float | None) -> float | None:
    return flops / min_bytes if flops and min_bytes else None


def _analyse_unit(unit: _Unit, py_sites: list[LaunchSite], host: dict, params: dict, arch: str,
                  archs: tuple[str, ...], block, elem_bytes: int, notes: list[str], fixed: dict):
    symbols = {demangle_kernel_name(s): s for s in unit.resources}
    symbols.update({demangle_kernel_name(s): s for s in unit.mixes if demangle_kernel_name(s) not in symbols})
    if not cuda_ast.parser_available():
        notes.append("tree-sitter-cuda not installed: no source features, launch sizes assumed")
        reports = [_kernel_report(None, symbol, unit, launch_for_symbol(name, block), arch, archs)
                   for name, symbol in symbols.items()]
        return reports, []
    root = cuda_ast.parse(unit.source).root_node
    macros = unit_macros(root, fixed)
    functions = cuda_ast.functions(root)
    shared = tuple(cuda_ast.shared_declarations(root))
    structs = struct_layouts(root, _integer_constants(macros))
    kernel_defs = {f.name: f for f in functions if f.is_kernel}
    device = {f.name: f for f in functions if not f.is_kernel and "__device__" in f.qualifiers}
    host_functions = [f for f in functions if not f.is_kernel and "__device__" not in f.qualifiers]
    host_sites = _guarded(notes, "launch sites", lambda: cuda_launch_sites(host_functions, kernel_defs, macros, host,
                                                                            fixed), [])
    sites = host_sites + py_sites
    reports = []
    for name, kernel in kernel_defs.items():
        launch = launch_for(kernel, sites, macros, block)
        if launch.note:
            notes.append(f"{name}: {launch.note}")
        report = _kernel_report(kernel, symbols.get(name, name), unit, launch, arch, archs)
        report.source = _guarded(notes, f"{name}: source features", lambda k=kernel: source_features(
            k, macros, lambda t: cuda_ast.type_bytes(t, elem_bytes) or elem_bytes), None)
        scalars = _kernel_scalars(kernel, sites, {**params, **fixed}, host, macros)
        report.accesses, report.assumed_scalars = _guarded(
            notes, f"{name}: access estimates", lambda k=kernel, lc=launch, sc=scalars: estimate_accesses(
                k, lc.block, lc.grid, sc, macros, device, elem_bytes, shared, structs), ([], []))
        report.branches, report.loops = _guarded(
            notes, f"{name}: control flow", lambda k=kernel, lc=launch, sc=scalars, r=report: estimate_control(
                k, lc.block, lc.grid, sc, macros, device, elem_bytes, shared, r.mix), ([], []))
        if report.assumed_scalars:
            notes.append(f"{name}: {', '.join(report.assumed_scalars)} taken as 4096 for address estimates")
        reports.append(report)
    return reports, host_sites


def _integer_constants(macros: dict) -> dict[str, int]:
    """The object-like macros and constants that are plain integers (`#define WORDS 5`): array members'
    extents in struct definitions."""
    found = {}
    for name, macro in macros.items():
        body = (macro.body or "").strip().strip("()").rstrip("uUlL")
        if macro.params is None and body.isdigit():
            found[name] = int(body)
    return found


def _guarded(notes: list[str], what: str, step, default):
    """Run one source-analysis step; candidate code the model does not cover costs that step, not the report."""
    try:
        with np.errstate(all="ignore"):
            return step()
    except Exception as exc:  # noqa: BLE001 - arbitrary candidate source must never crash the analysis
        notes.append(f"{what} skipped ({type(exc).__name__}: {str(exc)[:120]})")
        return default


def launch_for_symbol(name: str, block) -> LaunchConfig:
    if block is not None:
        return LaunchConfig(name, block, origin="given")
    return LaunchConfig(name, (256, 1, 1), origin="assumed", note="no source parser: 256 threads assumed")
