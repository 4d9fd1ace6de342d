"""Where the CUDA command-line tools are: the PyPI wheels first (so a fresh install has them), then PATH.

cuobjdump shells out to nvdisasm and says so only on stderr (exit 0), so the folder holding
nvdisasm is put on PATH for every child that may need it.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
from pathlib import Path


class ToolMissing(RuntimeError):
    pass


@functools.cache
def find_tool(name: str) -> Path | None:
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations if spec else []) or []:
        for sub in ("cu13/bin", "cuda_nvcc/bin", "cu12/bin"):
            candidate = Path(root) / sub / name
            if os.access(candidate, os.X_OK):
                return candidate
    found = shutil.which(name)
    return Path(found) if found else None


def require_tool(name: str) -> Path:
    path = find_tool(name)
    if path is None:
        raise ToolMissing(f"{name} not found: install the nvidia-cuda-* wheels or put the CUDA toolkit on PATH")
    return path


def tool_env() -> dict[str, str]:
    """The environment for running CUDA tools: their folders first on PATH."""
    env = dict(os.environ)
    folders = [str(p.parent) for p in (find_tool("nvdisasm"), find_tool("nvcc")) if p is not None]
    env["PATH"] = os.pathsep.join([*dict.fromkeys(folders), env.get("PATH", "")])
    return env
