"""Everything one candidate needs before it runs, and everything analysis reads from it afterwards.

`build_candidate` compiles a candidate the way its problem runs it:
- PyTorch problems, CuPy (NVRTC) candidates: every CUDA source string → cubin + ptxas log (the
  worker's CuPy compiles the same text again with NVRTC, cached in CUPY_CACHE_DIR).
- PyTorch problems, load_inline candidates: cubins of the device code, and a per-hash
  TORCH_EXTENSIONS_DIR (optionally prebuilt off the GPU worker).
- C problems, CUDA candidates: cubin + ptxas log, the .so the harness calls, the C reference and
  the naive CUDA port (the speed baseline).
- C problems, C candidates: the candidate and the reference through `cc`.
All of it works without a GPU; nothing here runs candidate code except the optional prebuild.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from engine.compilation import inline
from engine.compilation.c import compile_c_library
from engine.compilation.cuda import CudaBuild, compile_cubin, compile_shared_library
from engine.compilation.extract import cuda_sources_from_python, kernel_names

if TYPE_CHECKING:
    from engine.problems.model import Problem

# Appended to C-problem CUDA libraries: launch errors live in the library's own (static) cudart, so
# only code linked into it can read them; the harness calls this after each entry-point call.
ERROR_SHIM = """
#include <cuda_runtime.h>
extern "C" int refinery_last_error(void) { return (int)cudaGetLastError(); }
extern "C" const char *refinery_error_string(int code) { return cudaGetErrorString((cudaError_t)code); }
"""

LANGUAGES = ("python", "cuda", "c")
GPU_FLAVORS = ("cupy", "load_inline", "triton", "cuda-library")


@dataclass(frozen=True)
class CandidateBuild:
    """The artifacts of one candidate.

    `flavor` says how it runs: cupy | load_inline | triton | torch | cuda-library | c-library.
    """

    ok: bool
    language: str
    flavor: str
    cubins: tuple[CudaBuild, ...] = ()
    sources: tuple[str, ...] = ()  # the CUDA text each cubin was compiled from
    kernel_names: tuple[str, ...] = ()
    library: Path | None = None  # C problems: the candidate's .so
    reference_library: Path | None = None  # C problems: the C reference's .so
    baseline_library: Path | None = None  # C problems, CUDA candidates: the naive CUDA port's .so
    extensions_dir: Path | None = None  # load_inline: its TORCH_EXTENSIONS_DIR
    log: str = ""
    error: str = ""  # the first compiler error, for the verdict message
    notes: tuple[str, ...] = field(default=())
    seconds: float = 0.0
    cached: bool = False

    @property
    def needs_gpu(self) -> bool:
        return self.flavor in GPU_FLAVORS

    @property
    def ptxas_logs(self) -> tuple[str, ...]:
        return tuple(c.log for c in self.cubins)


def first_error(log: str) -> str:
    """The line a user should read first: the first one that says error, else the last line."""
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    return next((ln for ln in lines if "error" in ln.lower()), lines[-1] if lines else "build failed")


def language_of(path: Path | str) -> str:
    """Candidate language from a file name: .py → python, .cu → cuda, .c → c."""
    suffix = Path(path).suffix
    table = {".py": "python", ".cu": "cuda", ".cuh": "cuda", ".c": "c"}
    if suffix not in table:
        raise ValueError(f"cannot tell the language of {path}: use .py, .cu or .c")
    return table[suffix]


def _defaults(arch: str | None, cache_dir: Path | None) -> tuple[str, Path]:
    if arch is not None and cache_dir is not None:
        return arch, Path(cache_dir)
    from engine.settings import get_settings

    settings = get_settings()
    return arch or settings.gpu_arch, Path(cache_dir or settings.cache_dir / "build")


def _summarize(builds: list[CudaBuild]) -> tuple[bool, str, str, float, bool]:
    ok = all(b.ok for b in builds)
    log = "\n".join(b.log for b in builds if b.log)
    error = next((first_error(b.log) for b in builds if not b.ok), "")
    return ok, log, error, sum(b.seconds for b in builds), all(b.cached for b in builds)


def _build_note(record: dict) -> str:
    """One load_inline extension's build, as a note: which path built it and, for torch's, why."""
    if record.get("path") == "fast":
        how = f"the fast build ({record.get('route')}{', shared header' if record.get('shared_header') else ''})"
    else:
        how = f"torch's own build (the fast build: {record.get('reason')})"
    verb = "built by" if record.get("ok", True) else "failed in"
    return f"load_inline {record.get('name')}: {verb} {how} in {record.get('seconds', 0):.1f} s"


def _build_python(source: str, arch: str, cache_dir: Path, prebuild_inline: bool) -> CandidateBuild:
    extracted = cuda_sources_from_python(source)
    notes = list(extracted.notes)
    if not extracted.sources and not extracted.uses_load_inline:
        flavor = "triton" if "triton" in source else "cupy" if "cupy" in source else "torch"
        return CandidateBuild(True, "python", flavor, notes=tuple(notes))
    flavor = "load_inline" if extracted.uses_load_inline else "cupy"
    texts = [inline.device_only_source(s) if flavor == "load_inline" else s for s in extracted.sources]
    with ThreadPoolExecutor(max_workers=max(1, len(texts))) as pool:
        builds = list(pool.map(lambda text: compile_cubin(text, arch, cache_dir), texts))
    if flavor == "load_inline" and not all(b.ok for b in builds):
        # The device-only cut can drop something a kernel needs; the full unit with torch's headers decides.
        notes.append("device-only analysis build failed; compiled the full source with torch headers")
        texts = list(extracted.sources)
        builds = [compile_cubin(s, arch, cache_dir, extra=("-std=c++17", *inline.torch_include_flags()))
                  for s in texts]
    ok, log, error, seconds, cached = _summarize(builds)
    names = tuple(n for s in extracted.sources for n in kernel_names(s))
    ext_dir = inline.extensions_dir(cache_dir, source, arch) if flavor == "load_inline" else None
    if ok and ext_dir is not None and prebuild_inline and not any(ext_dir.rglob("*.so")):
        started = time.perf_counter()
        built, prebuild_log = inline.prebuild(source, ext_dir, arch, cache_dir / "prebuild" / ext_dir.name,
                                              pch_root=cache_dir / "pch")
        seconds += time.perf_counter() - started
        log = f"{log}\n{prebuild_log}".strip()
        notes += [_build_note(record) for record in inline.build_records(ext_dir)]
        if not built:
            ok, error = False, first_error(prebuild_log)
    return CandidateBuild(ok, "python", flavor, cubins=tuple(builds), sources=tuple(texts), kernel_names=names,
                          extensions_dir=ext_dir, log=log, error=error, notes=tuple(notes), seconds=seconds,
                          cached=cached)


def _build_c_problem(problem: Problem, source: str, language: str, arch: str, cache_dir: Path,
                     with_baseline: bool) -> CandidateBuild:
    tasks = {"reference": lambda: compile_c_library(problem.reference_source, cache_dir)}
    if language == "c":
        tasks["library"] = lambda: compile_c_library(source, cache_dir)
    else:
        tasks["cubin"] = lambda: compile_cubin(source, arch, cache_dir)
        tasks["library"] = lambda: compile_shared_library(source + ERROR_SHIM, arch, cache_dir)
        naive = next((i for i in problem.implementations if i.language == "cuda"), None)
        if with_baseline and naive is not None:
            tasks["baseline"] = lambda: compile_shared_library(naive.source + ERROR_SHIM, arch, cache_dir)
    with ThreadPoolExecutor(max_workers=len(tasks)) as pool:
        futures = {name: pool.submit(task) for name, task in tasks.items()}
        done = {name: f.result() for name, f in futures.items()}
    candidate_builds = [done["library"]] + ([done["cubin"]] if "cubin" in done else [])
    ok, log, error, seconds, cached = _summarize(candidate_builds)
    notes = []
    if not done["reference"].ok:
        ok, error = False, f"the C reference does not build: {first_error(done['reference'].log)}"
    baseline = done.get("baseline")
    if baseline is not None and not baseline.ok:
        notes.append(f"naive CUDA baseline does not build: {first_error(baseline.log)}")
    cubins = (done["cubin"],) if "cubin" in done else ()
    return CandidateBuild(
        ok, language, "c-library" if language == "c" else "cuda-library", cubins=cubins,
        sources=(source,) if cubins else (), kernel_names=kernel_names(source) if cubins else (),
        library=done["library"].output, reference_library=done["reference"].output,
        baseline_library=baseline.output if baseline is not None and baseline.ok else None,
        log=log, error=error, notes=tuple(notes), seconds=seconds, cached=cached)


def build_candidate(problem: Problem, source: str, language: str, *, arch: str | None = None,
                    cache_dir: Path | None = None, prebuild_inline: bool = False,
                    with_baseline: bool = True) -> CandidateBuild:
    """Compile `source` (python | cuda | c) for `problem`; a compiler failure is a result, not an exception."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown candidate language {language!r}; expected one of {LANGUAGES}")
    arch, cache_dir = _defaults(arch, cache_dir)
    started = time.perf_counter()
    if problem.kind == "pytorch":
        if language != "python":
            return CandidateBuild(False, language, "none", error="a PyTorch problem takes a Python module defining "
                                                                 "ModelNew")
        build = _build_python(source, arch, cache_dir, prebuild_inline)
    else:
        if language == "python":
            return CandidateBuild(False, language, "none", error="a C problem takes CUDA (.cu) or C (.c) source "
                                                                 f"defining {problem.entry}")
        build = _build_c_problem(problem, source, language, arch, cache_dir, with_baseline)
    return replace(build, error=build.error or ("" if build.ok else "build failed"),
                   seconds=time.perf_counter() - started)
