"""nvcc builds, cached on disk by a hash of everything that changes the output.

Two products: a cubin with its ptxas resource log (for static analysis; works with no GPU) and,
for C problems, a shared library whose C entry point the harness calls.
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from engine.compilation.sandboxed import SCRATCH, compile_sandboxed
from engine.toolchain import require_tool

NVCC_TIMEOUT_S = 300
# CuPy's NVRTC builds see these headers implicitly; nvcc needs them spelled out only for the
# fp16/bf16 types, which cuda_fp16.h / cuda_bf16.h provide to both.
ANALYSIS_FLAGS = ("-O3", "-lineinfo", "-Xptxas", "-v")


@dataclass(frozen=True)
class CudaBuild:
    ok: bool
    output: Path | None
    log: str  # compiler stdout+stderr: errors, warnings and the ptxas resource report
    seconds: float
    cached: bool
    key: str


def content_key(*parts: str | bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:24]


def arch_flags(arch: str) -> list[str]:
    """sm_90a needs the -gencode form (wgmma); plain archs use -arch."""
    if arch.endswith("a"):
        number = arch.removeprefix("sm_")
        return [f"-gencode=arch=compute_{number},code=sm_{number}"]
    return [f"-arch={arch}"]


def link_flags(nvcc: Path) -> list[str]:
    """The PyPI toolkit keeps cudart/cudadevrt in `lib/`, where nvcc.profile (which says `lib64`) does not look."""
    lib = nvcc.parent.parent / "lib"
    return [f"-L{lib}"] if (lib / "libcudadevrt.a").exists() else []


def _nvcc(source: str, suffix: str, mode_flags: list[str], out_name: str, arch: str, cache_dir: Path,
          extra: tuple[str, ...] = ()) -> CudaBuild:
    nvcc = require_tool("nvcc")
    flags = [*mode_flags, *arch_flags(arch), *ANALYSIS_FLAGS, *extra]
    if "-shared" in mode_flags:
        flags += link_flags(nvcc)
    key = content_key(source, " ".join(flags), str(nvcc))
    folder = cache_dir / key
    output, log_path = folder / out_name, folder / "build.log"
    if output.exists() and log_path.exists():
        return CudaBuild(True, output, log_path.read_text(), 0.0, True, key)
    folder.mkdir(parents=True, exist_ok=True)
    # Candidate source is compiled in a sandbox; the product is copied into the cache under a unique name
    # and renamed into place, so two builds of one key may race and a reader never sees half a file.
    done = compile_sandboxed([str(nvcc), *flags, "-o", f"{SCRATCH}/{out_name}", f"{SCRATCH}/source{suffix}"],
                             {f"source{suffix}": source}, {out_name: output}, NVCC_TIMEOUT_S)
    if done.ok:
        (folder / f"source{suffix}").write_text(source)
        log_partial = folder / f"build.log.{os.getpid()}-{threading.get_ident()}.partial"
        log_partial.write_text(done.log)
        os.replace(log_partial, log_path)  # last: its presence marks a complete cache entry
    return CudaBuild(done.ok, output if done.ok else None, done.log, done.seconds, False, key)


def compile_cubin(source: str, arch: str, cache_dir: Path, extra: tuple[str, ...] = ()) -> CudaBuild:
    """A cubin plus the ptxas -v log, for analysis; needs no GPU."""
    return _nvcc(source, ".cu", ["-cubin"], "kernel.cubin", arch, cache_dir / "cubin", extra)


def compile_shared_library(source: str, arch: str, cache_dir: Path, extra: tuple[str, ...] = ()) -> CudaBuild:
    """A .so exposing the candidate's extern "C" entry point (C problems)."""
    return _nvcc(source, ".cu", ["-shared", "-Xcompiler", "-fPIC"], "candidate.so", arch, cache_dir / "so", extra)


def torch_version() -> str:
    """The installed torch version, read from its metadata without importing torch (seconds saved)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return "none"
