"""`analyse_file`: the static report and the feedback a run shows, for any CUDA file.

A file analysed on its own has no problem, so `SourceFile` stands where the problem stands in a
run: a name, the element type its kernels take, one configuration made of the sizes given, and
the minimum bytes its host code moves (cudaMemcpy sizes, unless an expression is given). The rest
is the run's own path, as `engine.runs.pipeline.outcome_of` takes it for every candidate:
`analyse_candidate` (the sandboxed nvcc build, never run), then `build_diagnostics`, `run_tools`
and `render_feedback`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePath

from engine.analysis import StaticReport, analyse_candidate
from engine.analysis.source import cuda_ast
from engine.analysis.source.evaluator import Env, Evaluator, Unknown
from engine.analysis.source.host import Transfers, transfers, unit_macros
from engine.compilation.candidate import first_error
from engine.feedback import Diagnostics, Finding, build_diagnostics, render_feedback, run_tools
from engine.problems.expressions import ExpressionError, evaluate
from engine.problems.model import Config

Scalar = int | float
CUDA_SUFFIXES = (".cu", ".cuh")
NOT_CUDA_SUFFIXES = (".py", ".ipynb", ".txt", ".md", ".json", ".toml", ".o", ".so", ".cubin", ".ptx")
_CUDA_MARKERS = ("__global__", "__device__", "cuda_runtime", "#include <cuda")
# element types of kernel pointer parameters → the dtype names the feedback tools read
_DTYPES = {"float": "float32", "double": "float64", "half": "float16", "__half": "float16", "half2": "float16",
           "__half2": "float16", "__nv_bfloat16": "bfloat16", "nv_bfloat16": "bfloat16", "__nv_bfloat162": "bfloat16",
           "int": "int32", "int32_t": "int32", "int64_t": "int64", "long long": "int64", "float4": "float32",
           "float2": "float32"}


@dataclass(frozen=True)
class SourceFile:
    """Stands where a problem stands in a run, for one file: what the analysis and the feedback
    tools read from a problem (`slug`, `dtype`, `configs`, `flops`, `min_bytes`, `args`)."""

    slug: str
    dtype: str = "float32"
    configs: tuple[Config, ...] = ()
    flops_value: float | None = None
    bytes_value: float | None = None
    kind: str = "file"
    tags: tuple[str, ...] = ()
    args: tuple = ()

    @property
    def largest_config(self) -> Config:
        return self.configs[-1]

    def flops(self, config: Config) -> float | None:
        return self.flops_value

    def min_bytes(self, config: Config) -> float | None:
        return self.bytes_value


@dataclass
class FileAnalysis:
    """What `refinery analyze` and the Analyze page show: the report, or why there is none. A file that does not
    compile here (a header of another library, a toolkit part this machine lacks) keeps `error` and still gets
    the report its source alone gives, with `source_only` saying so."""

    file: str
    arch: str
    error: str = ""  # why there is no report, in words
    error_kind: str = ""  # not-cuda | compile-error | no-kernels
    static: StaticReport | None = None
    diagnostics: Diagnostics | None = None
    findings: list[Finding] = field(default_factory=list)
    feedback: str = ""
    sizes: dict[str, Scalar] = field(default_factory=dict)  # given (--size)
    file_values: dict[str, Scalar] = field(default_factory=dict)  # #defines and constants with a value
    needs_sizes: dict[str, str] = field(default_factory=dict)  # name → what needs it
    bytes_origin: str = ""  # where the minimum bytes came from ("" = unknown)
    flops_origin: str = ""
    source_only: str = ""  # why the report comes from the source alone (the file did not compile), "" if compiled

    @property
    def ok(self) -> bool:
        return not self.error

    def sizes_message(self) -> str:
        """The sentence that asks for sizes, or "" when every size the analysis needed was found."""
        if not self.needs_sizes:
            return ""
        wanted = ", ".join(f"{name} ({why})" for name, why in self.needs_sizes.items())
        flags = " ".join(f"--size {name}=VALUE" for name in self.needs_sizes)
        return f"sizes unknown: {wanted}; give them with {flags}"

    def to_json(self) -> dict:
        data = {"file": self.file, "arch": self.arch, "ok": self.ok, "error": self.error or None,
                "error_kind": self.error_kind or None, "sizes": self.sizes, "file_values": self.file_values,
                "needs_sizes": self.needs_sizes, "bytes_origin": self.bytes_origin or None,
                "flops_origin": self.flops_origin or None, "source_only": self.source_only or None,
                "feedback": self.feedback}
        if self.diagnostics is not None:
            return {**data, **self.diagnostics.to_json(self.findings)}
        return {**data, "static": self.static.to_json() if self.static is not None else None,
                "findings": [asdict(f) for f in self.findings]}


def parse_sizes(items: list[str] | str) -> dict[str, Scalar]:
    """`["N=4096", "M=1<<10"]` or `"N=4096, M=1024"` as {name: value}; a value may be arithmetic."""
    if isinstance(items, str):
        items = [part for chunk in items.replace(";", ",").split(",") for part in chunk.split()]
    sizes: dict[str, Scalar] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier():
            raise ValueError(f"size {item!r}: write NAME=VALUE, e.g. N=4096")
        try:
            sizes[name] = evaluate(value.strip(), sizes)
        except ExpressionError as exc:
            raise ValueError(f"size {item!r}: {value.strip()!r} is not a number") from exc
    return sizes


def _decode(source: str | bytes) -> str | None:
    if isinstance(source, str):
        return source
    try:
        text = source.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else text


def not_cuda_reason(name: str, text: str | None) -> str:
    """Why a file is not CUDA source ("" when it is)."""
    suffix = PurePath(name).suffix.lower()
    if text is None:
        return f"{name} is not a CUDA file: it is not text"
    if suffix in NOT_CUDA_SUFFIXES:
        return f"{name} is not a CUDA file ({suffix}): give CUDA C++ source with __global__ kernels, e.g. a .cu file"
    if suffix in CUDA_SUFFIXES or cuda_ast.has_launch(text) or any(m in text for m in _CUDA_MARKERS):
        return ""
    return f"{name} is not a CUDA file: no __global__ kernel, no launch and no CUDA header in it"


def _file_values(macros: dict, given: dict[str, Scalar]) -> dict[str, Scalar]:
    """The object-like #defines and constants that are numbers, as the analysis reads them."""
    ev = Evaluator(1, macros)
    values: dict[str, Scalar] = {}
    for name, macro in macros.items():
        if macro.params is not None or name in given:
            continue
        node = cuda_ast.parse_expression(macro.body) if macro.body else None
        if node is None:
            continue
        try:
            values[name] = ev.vector(node, Env())[0].item()
        except Unknown:
            continue
        except Exception:  # noqa: BLE001 - a macro the evaluator does not cover is simply not a number here
            continue
    return values


def _transfers(host_functions: list[cuda_ast.FunctionDef], macros: dict, sizes: dict[str, Scalar]) -> Transfers:
    try:
        return transfers(host_functions, macros, {}, sizes)
    except Exception:  # noqa: BLE001 - host code the model does not cover costs the byte count, not the report
        return Transfers()


def _dtype(kernels: list[cuda_ast.FunctionDef]) -> str:
    """The element type most kernel pointer parameters share (float32 when none says)."""
    counts: dict[str, int] = {}
    for kernel in kernels:
        for param in kernel.params:
            base = " ".join(w for w in param.type_name.split() if w not in ("const", "volatile", "unsigned"))
            if param.is_pointer and base in _DTYPES:
                counts[_DTYPES[base]] = counts.get(_DTYPES[base], 0) + 1
    return max(counts, key=counts.get) if counts else "float32"


def _model(expression: str | None, names: dict[str, Scalar], what: str) -> float | None:
    if not expression:
        return None
    try:
        return float(evaluate(expression, names))
    except ExpressionError as exc:
        raise ValueError(f"--{what} {expression!r}: {exc}") from exc


def _needs(static: StaticReport, moved: Transfers, bytes_known: bool) -> dict[str, str]:
    needs: dict[str, str] = {}
    for kernel in static.kernels:
        for name in kernel.launch.unknown:
            needs.setdefault(name, f"launch of {kernel.name}")
        if not kernel.launch.unknown:
            for name in kernel.assumed_scalars:
                needs.setdefault(name, f"parameter of {kernel.name}, taken as 4096")
    if not bytes_known:
        for name in moved.unknown:
            needs.setdefault(name, "bytes copied by cudaMemcpy")
    return needs


def _stand_in(name: str, root: cuda_ast.Node, sizes: dict[str, Scalar], flops: str | None, nbytes: str | None,
              result: FileAnalysis) -> tuple[SourceFile, Transfers]:
    """What a problem would give the analysis, read from the file: its numbers, element type and
    minimum bytes (the expressions given, else what the host code copies), at the sizes given."""
    macros = unit_macros(root, sizes)
    functions = cuda_ast.functions(root)
    host_functions = [f for f in functions if not f.is_kernel and "__device__" not in f.qualifiers]
    result.file_values = _file_values(macros, sizes)
    names = {**result.file_values, **sizes}
    moved = _transfers(host_functions, macros, sizes)
    min_bytes = _model(nbytes, names, "bytes")
    result.bytes_origin = "--bytes" if min_bytes is not None else moved.origin
    if min_bytes is None and moved.min_bytes:
        min_bytes = float(moved.min_bytes)
    flop_count = _model(flops, names, "flops")
    result.flops_origin = "--flops" if flop_count is not None else ""
    config = Config("sizes given" if sizes else "sizes from the file", dict(sizes))
    kernels = [f for f in functions if f.is_kernel]
    return SourceFile(PurePath(name).stem, _dtype(kernels), (config,), flop_count, min_bytes), moved


def analyse_file(source: str | bytes, name: str = "input.cu", *, arch: str | None = None,
                 sizes: dict[str, Scalar] | None = None, flops: str | None = None, nbytes: str | None = None,
                 cache_dir: Path | None = None) -> FileAnalysis:
    """Static report, bottleneck class and ranked findings of one CUDA file.

    `sizes` fix names wherever the file defines or declares them (`#define N`, `const int N`, a
    host local, a parameter); `flops` and `nbytes` are expressions over the sizes and the file's
    numbers (the analytical model a problem would carry). Raises ValueError for an expression that
    cannot be evaluated; a file that cannot be analysed is a result with `error` set.
    """
    if arch is None:
        from engine.settings import get_settings

        arch = get_settings().gpu_arch
    sizes = dict(sizes or {})
    text = _decode(source)
    result = FileAnalysis(file=name, arch=arch, sizes=sizes)
    if reason := not_cuda_reason(name, text):
        result.error, result.error_kind = reason, "not-cuda"
        return result
    root = cuda_ast.parse(text).root_node
    stand_in, moved = _stand_in(name, root, sizes, flops, nbytes, result)
    static = analyse_candidate(stand_in, text, "cuda", stand_in.largest_config, arch=arch, cache_dir=cache_dir,
                               fixed=sizes)
    result.static = static
    if not static.ok:
        log = static.compile_log.replace("source.cu", PurePath(name).name)
        result.error = f"{name} does not compile: {first_error(log)}" if log.strip() else \
            f"{name} could not be compiled here: {'; '.join(static.notes) or 'nvcc failed'}"
        result.error_kind = "compile-error"
        if not static.kernels:
            return result
        # what the source alone shows: accesses, branches, loops and the launch need no compiler
        result.source_only = (f"source-only analysis: {result.error}; no registers, spills, occupancy or SASS, "
                              "so findings that need them are not made")
        static.notes.insert(0, result.source_only)
    if not static.kernels:
        result.error, result.error_kind = f"no kernels found: {name} defines no __global__ function", "no-kernels"
        return result
    result.needs_sizes = _needs(static, moved, stand_in.bytes_value is not None)
    own = unit_macros(root)
    static.notes.extend(f"{given}: the file defines it as {own[given].body}; the compiled code keeps that, the "
                        f"launch and the estimates use the given {value}" for given, value in sizes.items()
                        if given in own)
    # the run's path from here on (engine.runs.pipeline.outcome_of): diagnostics, the tools, the feedback text
    result.diagnostics = build_diagnostics(static=static, problem=stand_in)
    result.findings = run_tools(result.diagnostics)
    result.feedback = render_feedback(result.findings, result.diagnostics)
    return result
