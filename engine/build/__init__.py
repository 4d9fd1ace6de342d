"""Build: candidate source → loadable artifacts, cached on disk by a content hash, in parallel.

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
    "compile_c_library": "engine.build.c", "CandidateBuild": "engine.build.candidate",
    "build_candidate": "engine.build.candidate", "first_error": "engine.build.candidate",
    "language_of": "engine.build.candidate", "CudaBuild": "engine.build.cuda", "compile_cubin": "engine.build.cuda",
    "compile_shared_library": "engine.build.cuda", "content_key": "engine.build.cuda",
    "BuildRequest": "engine.build.parallel", "build_many": "engine.build.parallel",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_getattr("engine.build", _EXPORTS)
