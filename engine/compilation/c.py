"""`cc -O3 -shared -fPIC` builds of C references and CPU candidates, cached on disk like the nvcc ones,
compiled inside the sandbox like every build of candidate or imported code.

The flags are the ones `engine.problem_import.probe` validates references with, so a reference that
passed validation builds here too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.compilation.cuda import CudaBuild, content_key
from engine.compilation.sandboxed import SCRATCH, compile_sandboxed

C_COMPILER = "cc"
C_FLAGS = ("-O3", "-shared", "-fPIC")
CC_TIMEOUT_S = 120


def compile_c_library(source: str, cache_dir: Path, extra: tuple[str, ...] = ()) -> CudaBuild:
    """A shared library from C source (compiled in a sandbox); the record type is the nvcc one."""
    cc = shutil.which(C_COMPILER) or C_COMPILER
    flags = [*C_FLAGS, *extra]
    key = content_key(source, " ".join(flags), cc)
    folder = Path(cache_dir) / "c" / key
    output, log_path = folder / "library.so", folder / "build.log"
    if output.exists() and log_path.exists():
        return CudaBuild(True, output, log_path.read_text(), 0.0, True, key)
    done = compile_sandboxed([cc, *flags, "-o", f"{SCRATCH}/library.so", f"{SCRATCH}/source.c", "-lm"],
                             {"source.c": source}, {"library.so": output}, CC_TIMEOUT_S)
    if done.ok:
        (folder / "source.c").write_text(source)
        log_path.write_text(done.log)
    return CudaBuild(done.ok, output if done.ok else None, done.log, done.seconds, False, key)
