"""Build: candidate source → loadable artifacts, cached on disk by a content hash, in parallel.

Offers `build_candidate` (one candidate: cubins + ptxas logs, .so files, load_inline folders),
`build_many` (many, on every CPU core), `language_of`, and the lower-level `compile_cubin`,
`compile_shared_library`, `compile_c_library`. Nothing here needs a GPU.
"""

from engine.build.c import compile_c_library
from engine.build.candidate import CandidateBuild, build_candidate, first_error, language_of
from engine.build.cuda import CudaBuild, compile_cubin, compile_shared_library, content_key
from engine.build.parallel import BuildRequest, build_many

__all__ = [
    "BuildRequest", "CandidateBuild", "CudaBuild", "build_candidate", "build_many", "compile_c_library",
    "compile_cubin", "compile_shared_library", "content_key", "first_error", "language_of",
]
