"""The compile step: candidate source → loadable artifacts, cached on disk by a content hash, in parallel.

Offers `build_candidate` (one candidate: cubins + ptxas logs, .so files, load_inline folders),
`build_many` (many, on every CPU core), `language_of`, and the lower-level `compile_cubin`,
`compile_shared_library`, `compile_c_library`; `inline` prepares load_inline candidates and starts their
sandboxed prebuild (its programs and the fast build live in `engine.untrusted.fastinline`), and
`shared_header` keeps the precompiled headers that build shares. Nothing here needs a GPU. Exports load
lazily, so importing the package pulls in nothing heavy.
"""

from __future__ import annotations

from engine.lazy_exports import lazy_getattr

_EXPORTS = {
    "compile_c_library": "engine.compilation.c", "CandidateBuild": "engine.compilation.candidate",
    "build_candidate": "engine.compilation.candidate", "first_error": "engine.compilation.candidate",
    "language_of": "engine.compilation.candidate", "CudaBuild": "engine.compilation.cuda",
    "compile_cubin": "engine.compilation.cuda",
    "compile_shared_library": "engine.compilation.cuda", "content_key": "engine.compilation.cuda",
    "BuildRequest": "engine.compilation.parallel", "build_many": "engine.compilation.parallel",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr("engine.compilation", _EXPORTS)
