"""KernelBench `load_inline` candidates: accepted unchanged, built once per content hash.

A load_inline build takes about a minute (it compiles torch's headers), so three things keep it to
once per distinct candidate: each candidate gets its own TORCH_EXTENSIONS_DIR named by a hash of its
source, arch and torch version (torch's own ninja cache then finds it on every later load); on a GPU
machine the build runs ahead of the runner in a sandboxed CPU process (`prebuild`), so the GPU is
not idle while it compiles; and analysis cubins are compiled from the device code alone
(`device_only_source`), which takes a second instead of a minute.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from engine.build.cuda import content_key

PREBUILD_TIMEOUT_S = 900
EXTENSIONS_INSIDE = "/refinery/ext"  # the runner shows a candidate's build at this same path
_TORCH_TOKENS = re.compile(r"\b(torch|at|c10|pybind11|py)::|\bTORCH_|\bPYBIND11_|\bAT_(DISPATCH|ASSERT)|\bC10_")
_TORCH_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](torch|ATen|c10|pybind11|Python)[^>\"]*[>\"].*$", re.M)


def torch_version() -> str:
    """The installed torch version, read from its metadata without importing torch (seconds saved)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("torch")
    except PackageNotFoundError:
        return "none"


def torch_arch_list(arch: str) -> str:
    """`sm_90` → `9.0` (TORCH_CUDA_ARCH_LIST's spelling); `sm_90a` → `9.0a`."""
    digits = arch.removeprefix("sm_")
    suffix = digits[-1] if digits[-1].isalpha() else ""
    number = digits.rstrip("abcdefghijklmnopqrstuvwxyz")
    return f"{number[:-1]}.{number[-1]}{suffix}"


def extensions_dir(cache_dir: Path, source: str, arch: str) -> Path:
    """The TORCH_EXTENSIONS_DIR of one candidate: same source, arch and torch → same folder → no rebuild."""
    return Path(cache_dir) / "torch_extensions" / content_key(source, arch, torch_version())


def torch_include_flags() -> list[str]:
    """-I flags for torch/extension.h, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return []
    include = Path(next(iter(spec.submodule_search_locations))) / "include"
    dirs = [include, include / "torch" / "csrc" / "api" / "include", Path(sysconfig.get_paths()["include"])]
    return [f"-I{d}" for d in dirs if d.is_dir()]


def _top_level_items(source: str) -> list[str]:
    """Split C++ into top-level items (a declaration up to `;`, a block up to its `}`, a preprocessor line)."""
    items, start, depth, i, n = [], 0, 0, 0, len(source)
    while i < n:
        ch = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i) if source.find("\n", i) >= 0 else n
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch in "\"'":
            j = i + 1
            while j < n and source[j] != ch:
                j += 2 if source[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "#" and depth == 0 and source[start:i].strip() == "":
            end = i
            while True:  # a directive runs to the end of the line, continued by backslashes
                end = source.find("\n", end)
                if end < 0 or source[end - 1] != "\\":
                    break
                end += 1
            end = n if end < 0 else end + 1
            items.append(source[start:end])
            start = i = end
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                j = i + 1
                while j < n and source[j] in " \t":
                    j += 1
                if j < n and source[j] == ";":
                    j += 1
                items.append(source[start:j])
                start = i = j
                continue
        elif ch == ";" and depth == 0:
            items.append(source[start:i + 1])
            start = i + 1
        i += 1
    items.append(source[start:])
    return items


def device_only_source(source: str) -> str:
    """The CUDA source without torch's headers and the host functions that use torch types.

    Kernels and device helpers are kept byte for byte, so the cubin is the one load_inline builds.
    """
    kept = []
    for item in _top_level_items(_TORCH_INCLUDE.sub("", source)):
        if _TORCH_TOKENS.search(item) and "__global__" not in item and "__device__" not in item:
            continue
        kept.append(item)
    text = "".join(kept)
    return text if "cuda_runtime" in text else "#include <cuda_runtime.h>\n" + text


def prebuild(source: str, ext_dir: Path, arch: str, scratch: Path | None = None,
             timeout_s: float = PREBUILD_TIMEOUT_S) -> tuple[bool, str]:
    """Run the candidate module once in a sandboxed CPU-only process so its load_inline builds land in
    `ext_dir`, which the sandbox sees at the path the runner will later see it at (torch's build files
    hold absolute paths, so nothing is rebuilt there)."""
    from engine.sandbox import JobLimits, Mount, SandboxSpec, boundary, run, scratch_inside
    from engine.sandbox.programs import RUNNER_PACKAGES, hidden_roots, mounts_for, python_env

    ext_dir.mkdir(parents=True, exist_ok=True)
    where = boundary()
    folder = Path(tempfile.mkdtemp(prefix="prebuild-", dir=_sandbox_root()))
    try:
        (folder / "candidate.py").write_text(source)
        spec = SandboxSpec(argv=[], scratch=folder, hidden=hidden_roots(), role="build",
                           limits=JobLimits(memory_mb=16384, processes=256, cpu_seconds=int(timeout_s) * 4))
        inside = scratch_inside(spec, where)
        extensions = EXTENSIONS_INSIDE if where.namespaced else str(ext_dir)
        spec.argv = [sys.executable, "-m", "engine.verify.runner.prebuild", f"{inside}/candidate.py"]
        spec.mounts = [*mounts_for(RUNNER_PACKAGES, where)] + (
            [Mount(ext_dir, EXTENSIONS_INSIDE, writable=True)] if where.namespaced else [])
        spec.env = python_env(RUNNER_PACKAGES, where, TORCH_EXTENSIONS_DIR=extensions,
                              TORCH_CUDA_ARCH_LIST=torch_arch_list(arch), CUDA_VISIBLE_DEVICES="",
                              MAX_JOBS=str(max(1, os.cpu_count() or 1)))
        done = run(spec, timeout_s=timeout_s)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.timed_out:
        return False, f"load_inline build timed out after {timeout_s:.0f} s"
    return done.returncode == 0, (done.stdout + done.stderr).decode("utf-8", "replace")[-20000:]


def _sandbox_root() -> Path:
    root = Path(tempfile.gettempdir()) / "refinery-sandbox-builds"
    root.mkdir(parents=True, exist_ok=True)
    return root
