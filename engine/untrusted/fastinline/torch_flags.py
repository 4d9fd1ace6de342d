"""torch's own build plan for a load_inline call, learned without compiling anything.

The fast build reads the `build.ninja` torch writes for each candidate; code that must know torch's
flags before any candidate runs (building the shared header ahead of time) asks torch the same way:
a `load_inline` of a stub whose ninja step is replaced by one that only keeps the file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from engine.untrusted.fastinline.ninja import TorchBuild, parse_build_file

STUB_CUDA = "__global__ void refinery_stub_kernel() {}\n"


class _Captured(Exception):
    def __init__(self, text: str) -> None:
        super().__init__("captured")
        self.text = text


def ensure_cuda_home() -> None:
    """A CPU build of torch leaves CUDA_HOME unset even where nvcc is installed; its load_inline can still
    compile CUDA (not load it), which is what builds and tests on a machine without a GPU need."""
    from torch.utils import cpp_extension

    if cpp_extension.CUDA_HOME is None:
        nvcc = shutil.which("nvcc")
        if nvcc is not None:
            cpp_extension.CUDA_HOME = str(Path(nvcc).resolve().parent.parent)


def torch_build_plan(extra_cflags: Sequence[str] = (), extra_cuda_cflags: Sequence[str] = (),
                     extra_include_paths: Sequence[str] = (), with_cuda: bool = True) -> TorchBuild:
    """The TorchBuild torch would run for a load_inline with these extras (the name is a stub's)."""
    from torch.utils import cpp_extension

    ensure_cuda_home()
    original = cpp_extension._run_ninja_build

    def capture(build_directory: str, verbose: bool, error_prefix: str) -> None:
        raise _Captured((Path(build_directory) / "build.ninja").read_text())

    folder = Path(tempfile.mkdtemp(prefix="torch-plan-"))
    cpp_extension._run_ninja_build = capture
    arch_unset = "TORCH_CUDA_ARCH_LIST" not in os.environ
    if arch_unset:  # the arch changes nvcc's flags only; with no GPU to ask, torch needs one named
        os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
    try:
        cpp_extension.load_inline(
            name="refinery_stub", cpp_sources="", cuda_sources=STUB_CUDA if with_cuda else None,
            extra_cflags=list(extra_cflags), extra_cuda_cflags=list(extra_cuda_cflags),
            extra_include_paths=list(extra_include_paths), build_directory=str(folder), verbose=False)
    except _Captured as captured:
        return parse_build_file(captured.text, folder)
    finally:
        cpp_extension._run_ninja_build = original
        if arch_unset:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        shutil.rmtree(folder, ignore_errors=True)
    raise RuntimeError("torch's load_inline did not reach its ninja step")
