"""`cc -O3 -shared -fPIC` builds of C references and CPU candidates, cached on disk like the nvcc ones.

The flags are the ones `engine.problems.probe` validates references with, so a reference that
passed validation builds here too.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from engine.build.cuda import CudaBuild, content_key

C_COMPILER = "cc"
C_FLAGS = ("-O3", "-shared", "-fPIC")
CC_TIMEOUT_S = 120


def compile_c_library(source: str, cache_dir: Path, extra: tuple[str, ...] = ()) -> CudaBuild:
    """A shared library from C source; the record type is the nvcc one (ok, output, log, seconds, cached, key)."""
    cc = shutil.which(C_COMPILER) or C_COMPILER
    flags = [*C_FLAGS, *extra]
    key = content_key(source, " ".join(flags), cc)
    folder = Path(cache_dir) / "c" / key
    output, log_path = folder / "library.so", folder / "build.log"
    if output.exists() and log_path.exists():
        return CudaBuild(True, output, log_path.read_text(), 0.0, True, key)
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / "source.c"
    src.write_text(source)
    started = time.perf_counter()
    try:
        done = subprocess.run([cc, *flags, "-o", str(output), str(src), "-lm"], capture_output=True, text=True,
                              timeout=CC_TIMEOUT_S, cwd=folder)
        log, ok = (done.stdout + done.stderr).strip(), done.returncode == 0 and output.exists()
    except (subprocess.TimeoutExpired, FileNotFoundError) as exc:
        log, ok = f"{C_COMPILER} failed to run: {exc}", False
    seconds = time.perf_counter() - started
    if ok:
        log_path.write_text(log)
    return CudaBuild(ok, output if ok else None, log, seconds, False, key)
