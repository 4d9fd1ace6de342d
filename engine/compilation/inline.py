"""KernelBench `load_inline` candidates: accepted unchanged, built once per content hash.

torch's own load_inline build takes about a minute (it compiles torch's headers three times), so:
each candidate gets its own TORCH_EXTENSIONS_DIR named by a hash of its source, arch and torch version
(a later load finds the build there); on a GPU machine the build runs ahead of the runner in a
sandboxed CPU process (`prebuild`), so the GPU is not idle while it compiles; that build is the fast one
of `engine.untrusted.fastinline` (torch's headers precompiled once per flag set and shared, the kernels
compiled without them), with torch's own build wherever the fast one cannot; and analysis cubins are
compiled from the device code alone (`device_only_source`), which takes a second instead of a minute.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import sys
import sysconfig
from pathlib import Path

from engine.compilation.cuda import content_key, torch_version
from engine.python_ast import parse as parse_python
from engine.untrusted.fastinline.split import TORCH_TOKENS as _TORCH_TOKENS

PREBUILD_TIMEOUT_S = 900
EXTENSIONS_INSIDE = "/refinery/ext"  # the runner shows a candidate's build at this same path
PCH_INSIDE = "/refinery/pch"  # the shared precompiled headers, read-only in the prebuild
_TORCH_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](torch|ATen|c10|pybind11|Python)[^>\"]*[>\"].*$", re.M)


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


def load_inline_extras(source: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The (extra_cflags, extra_include_paths) of each load_inline call whose values are written out
    literally, read without running the module: the shared headers they need can be built first."""
    try:
        tree = parse_python(source)
    except SyntaxError:
        return []
    found = []
    for node in ast.walk(tree):
        name = getattr(getattr(node, "func", None), "id", None) or getattr(getattr(node, "func", None), "attr", None)
        if not isinstance(node, ast.Call) or name != "load_inline":
            continue
        values = {}
        for keyword in node.keywords:
            if keyword.arg in ("extra_cflags", "extra_include_paths"):
                try:
                    value = ast.literal_eval(keyword.value)
                except (ValueError, TypeError, SyntaxError):
                    break
                values[keyword.arg] = (value,) if isinstance(value, str) else tuple(value or ())
        else:
            found.append((values.get("extra_cflags", ()), values.get("extra_include_paths", ())))
    return list(dict.fromkeys(found))


def build_records(ext_dir: Path) -> list[dict]:
    """What the prebuild wrote about each extension it built: which path built it, in how long, and why
    the fast build did not where it did not."""
    from engine.untrusted.fastinline.prebuild import RECORDS

    try:
        lines = (Path(ext_dir) / RECORDS).read_text().splitlines()
    except OSError:
        return []
    return [json.loads(line) for line in lines if line.strip()]


def prebuild(source: str, ext_dir: Path, arch: str, scratch: Path | None = None,
             timeout_s: float = PREBUILD_TIMEOUT_S, *, fast: bool = True,
             pch_root: Path | None = None) -> tuple[bool, str]:
    """Run the candidate module once in a sandboxed CPU-only process so its load_inline builds land in
    `ext_dir`, which the sandbox sees at the path the runner will later see it at (torch's build files
    hold absolute paths). With `fast`, the extensions are built by `engine.untrusted.fastinline` on the
    shared headers under `pch_root` (built first, outside the candidate's sandbox, when missing)."""
    from engine.sandbox import JobLimits, Mount, SandboxSpec, boundary, run, scratch_inside
    from engine.sandbox import scratch as scratch_folders
    from engine.sandbox.programs import UNTRUSTED_PACKAGES, hidden_roots, mounts_for, python_env

    ext_dir.mkdir(parents=True, exist_ok=True)
    where = boundary()
    header_notes = []
    if fast and pch_root is not None:
        from engine.compilation.shared_header import ensure_header

        for cflags, includes in load_inline_extras(source) or [((), ())]:
            header = ensure_header(pch_root, cflags, includes)
            if not header.ok:
                header_notes.append(f"shared header for {list(cflags)} not built: {header.log[-500:]}")
    limits = JobLimits(memory_mb=16384, processes=256, cpu_seconds=int(timeout_s) * 4)
    folder = scratch_folders.make("prebuild", quota_mb=limits.scratch_mb)
    try:
        (folder / "candidate.py").write_text(source)
        spec = SandboxSpec(argv=[], scratch=folder, hidden=hidden_roots(), role="build", limits=limits)
        inside = scratch_inside(spec, where)
        extensions = EXTENSIONS_INSIDE if where.namespaced else str(ext_dir)
        program = "engine.untrusted.fastinline.prebuild" if fast else "engine.untrusted.fastinline.torch_prebuild"
        spec.argv = [sys.executable, "-m", program, f"{inside}/candidate.py"]
        spec.mounts = [*mounts_for(UNTRUSTED_PACKAGES, where)] + (
            [Mount(ext_dir, EXTENSIONS_INSIDE, writable=True)] if where.namespaced else [])
        if fast and pch_root is not None:
            Path(pch_root).mkdir(parents=True, exist_ok=True)
            spec.argv += ["--pch", PCH_INSIDE if where.namespaced else str(pch_root)]
            spec.mounts += [Mount(Path(pch_root), PCH_INSIDE)] if where.namespaced else []
        code = python_env(UNTRUSTED_PACKAGES, where)["PYTHONPATH"]
        spec.env = python_env(UNTRUSTED_PACKAGES, where, PYTHONPATH=os.pathsep.join([code, *_parser_roots()]),
                              TORCH_EXTENSIONS_DIR=extensions,
                              TORCH_CUDA_ARCH_LIST=torch_arch_list(arch), CUDA_VISIBLE_DEVICES="",
                              MAX_JOBS=str(max(1, os.cpu_count() or 1)))
        done = run(spec, timeout_s=timeout_s)
    finally:
        scratch_folders.remove(folder)
    notes = "".join(f"{note}\n" for note in header_notes)
    if done.timed_out:
        return False, f"{notes}load_inline build timed out after {timeout_s:.0f} s"
    return done.returncode == 0, notes + (done.stdout + done.stderr).decode("utf-8", "replace")[-20000:]


def _parser_roots() -> list[str]:
    """Where tree-sitter is installed, for the prebuild's PYTHONPATH: the fast build's cut parses with it, and
    a machine may have it outside the interpreter's own site-packages (a `pip --target` folder)."""
    roots = []
    for name in ("tree_sitter", "tree_sitter_cuda"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            roots.append(str(Path(spec.origin).parent.parent))
    return list(dict.fromkeys(roots))

