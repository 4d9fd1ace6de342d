"""Helpers for the fast load_inline build's tests: the prebuild program run as the verifier runs it (less
the sandbox), and the link-time stand-ins a CPU-only torch needs.

A CPU build of torch ships no libc10_cuda/libtorch_cuda and the CUDA wheels ship libcudart.so.13 only, so
torch's own link line (`-lc10_cuda -ltorch_cuda -lcudart`) cannot resolve here. Empty stand-ins found
through LIBRARY_PATH let both builds link; nothing links against them at run time (the library imports,
its kernels need a GPU to run).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from engine.sandbox.programs import tool_path
from engine.toolchain import find_tool

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "load_inline"


def link_stand_ins(folder: Path) -> Path:
    """A folder with empty libc10_cuda.so / libtorch_cuda.so and libcudart.so → the wheel's libcudart.so.13."""
    folder.mkdir(parents=True, exist_ok=True)
    empty = folder / "empty.c"
    empty.write_text("void refinery_link_stand_in(void) {}\n")
    for name in ("libc10_cuda.so", "libtorch_cuda.so"):
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(folder / name), str(empty)], check=True)
    nvcc = find_tool("nvcc")
    cudart = next(iter(sorted((nvcc.parent.parent / "lib").glob("libcudart.so.*"))), None) if nvcc else None
    if cudart is not None and not (folder / "libcudart.so").exists():
        (folder / "libcudart.so").symlink_to(cudart)
    return folder


@dataclass(frozen=True)
class Prebuilt:
    returncode: int
    log: str
    records: list[dict]
    ext: Path

    def folder(self, name: str) -> Path:
        return self.ext / name


def env_for(ext: Path, stand_ins: Path) -> dict[str, str]:
    inherited = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX")}  # as in the sandbox
    return dict(inherited, TORCH_EXTENSIONS_DIR=str(ext), TORCH_CUDA_ARCH_LIST="9.0", CUDA_VISIBLE_DEVICES="",
                LIBRARY_PATH=str(stand_ins), PATH=tool_path(),
                PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))


def prebuild(source: str, work: Path, stand_ins: Path, pch: Path | None, fast: bool = True) -> Prebuilt:
    """The verifier's prebuild program on `source`, as it runs (less the sandbox)."""
    work.mkdir(parents=True, exist_ok=True)
    path = work / "candidate.py"
    path.write_text(source)
    ext = work / "ext"
    argv = [sys.executable, "-m", "engine.untrusted.fastinline.prebuild", str(path)]
    argv += (["--pch", str(pch)] if pch is not None else []) if fast else ["--torch"]
    done = subprocess.run(argv, env=env_for(ext, stand_ins), capture_output=True, text=True, timeout=900)
    records_file = ext / "builds.jsonl"
    records = [json.loads(line) for line in records_file.read_text().splitlines()] if records_file.exists() else []
    return Prebuilt(done.returncode, done.stdout + done.stderr, records, ext)


LOAD = r"""
import json, sys, types
from torch.utils import cpp_extension
from engine.untrusted.fastinline.torch_flags import ensure_cuda_home
from engine.untrusted.runner import prebuilt
ensure_cuda_home()  # a CPU build of torch: CUDA_HOME from nvcc, as the prebuild does
ran = []
inner = cpp_extension._run_ninja_build
def spy(*args):
    ran.append(args[0])
    inner(*args)
cpp_extension._run_ninja_build = spy
prebuilt.install()  # wraps the spy: it runs only where the stamp does not match
module = types.ModuleType("candidate")
exec(compile(open(sys.argv[1]).read(), sys.argv[1], "exec"), module.__dict__)
extensions = {k: sorted(n for n in dir(v) if not n.startswith("_")) for k, v in vars(module).items()
              if isinstance(v, types.ModuleType) and str(getattr(v, "__file__", "")).endswith(".so")}
print(json.dumps({"ninja_runs": len(ran), "extensions": extensions}))
"""


def load_as_runner(work: Path, stand_ins: Path) -> dict:
    """Load the prebuilt candidate the way the runner does (torch's load_inline, the prebuilt hook): which
    Python functions its extensions have, and whether torch would have had to rebuild them."""
    done = subprocess.run([sys.executable, "-c", LOAD, str(work / "candidate.py")],
                          env=env_for(work / "ext", stand_ins), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
