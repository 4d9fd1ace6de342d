"""The fast build of KernelBench `load_inline` candidates: torch's own sources, flags and link, compiled
with torch's headers parsed once per flag set instead of three times per candidate.

Everything here runs inside the build sandbox. `prebuild` is the verifier's load_inline prebuild
process (`python -m engine.untrusted.fastinline.prebuild`: the candidate's module run once, each
extension built by `extension.build_extension` through the `hook` installed into torch's load_inline,
torch's own build as the fallback); `torch_prebuild` is the same run with torch's build alone; `pch_job`
builds one shared precompiled header (`pch`); `split` is the device/host cut, `ninja` reads torch's
build file and `torch_flags` learns torch's flags for given extras. The trusted side keeps the shared
headers (`engine.compilation.shared_header`) and starts these programs. Imports stay light and local: only
this folder and `engine.wire` are visible in the sandbox.
"""
