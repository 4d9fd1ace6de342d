"""The fast build of KernelBench `load_inline` candidates: torch's own sources, flags and link, compiled
with torch's headers parsed once per flag set instead of three times per candidate.

Offers `build_extension` (one extension, in the folder torch wrote), `install` (the prebuild process's
hook into torch's load_inline, with torch's own build as the fallback; `python -m
engine.build.fastinline.prebuild` is that process), `split_cuda` (the device/host
cut), `ensure_header` / `warm_headers` (the shared precompiled headers, built outside any candidate's
sandbox) and `torch_build_plan` (torch's flags for given extras). Imports stay light: this package also
runs inside the prebuild sandbox, where only it and the runner packages are visible.
"""

from __future__ import annotations

from engine.lazy_exports import lazy_getattr

_EXPORTS = {
    "build_extension": "engine.build.fastinline.extension", "FastBuild": "engine.build.fastinline.extension",
    "install": "engine.build.fastinline.hook", "split_cuda": "engine.build.fastinline.split",
    "CannotSplit": "engine.build.fastinline.split", "ensure_header": "engine.build.fastinline.shared_header",
    "warm_headers": "engine.build.fastinline.shared_header",
    "torch_build_plan": "engine.build.fastinline.torch_flags",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr("engine.build.fastinline", _EXPORTS)
