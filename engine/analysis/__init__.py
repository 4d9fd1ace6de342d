"""Diagnostics of candidates, in three rooms by what they read:

- `source`: the CUDA text (tree-sitter syntax, per-lane evaluation of index arithmetic, coalescing and bank
  estimates, per-warp branch splits and loop trip counts, launch shapes, host-side transfers);
- `binary`: what the compiler made of it (ptxas resources, the SASS mix with source lines, occupancy);
- `profile`: what a GPU measured (ncu around a command or one verified candidate, the stored ncu record and its
  agreement with the static estimate, device ceilings and the roofline with its bottleneck class).

Here: `analyse_candidate` (`static`) → `StaticReport` (`record`, no GPU needed), and the report in words
(`summary`). This module is the façade: callers outside the analysis import what they use from here. Exports
load lazily, so a process that needs one record does not pull in the parsers (tree-sitter) the source room needs.
Energy is measured where the calls run (`engine.verify.judge.energy_meter`); the feedback a run shows for any
CUDA file is `engine.feedback.standalone`.
"""

from __future__ import annotations

from engine.lazy_exports import lazy_getattr

_EXPORTS = {
    **dict.fromkeys(("InstructionMix",), "engine.analysis.binary.sass"),
    **dict.fromkeys(("REPORTED_ARCHS", "Occupancy", "theoretical_occupancy"), "engine.analysis.binary.occupancy"),
    **dict.fromkeys(("KernelResources",), "engine.analysis.binary.ptxas"),
    **dict.fromkeys(("LaunchConfig",), "engine.analysis.source.launch"),
    **dict.fromkeys(("KernelAgreement", "compare_kernels"), "engine.analysis.profile.agreement"),
    **dict.fromkeys(("BUILTIN", "DeviceCeilings", "ceilings_for", "match_device", "measure_ceilings",
                     "shown_ceilings"), "engine.analysis.profile.devices"),
    **dict.fromkeys(("profile_candidate", "profile_config"), "engine.analysis.profile.dynamic"),
    **dict.fromkeys(("DEFAULT_METRICS", "NcuKernel", "NcuProfile", "NcuSummary", "parse_raw_csv",
                     "profile_command"), "engine.analysis.profile.ncu"),
    **dict.fromkeys(("NcuRecord", "ncu_record"), "engine.analysis.profile.ncu_record"),
    **dict.fromkeys(("Achieved", "Bottleneck", "Classification", "RooflinePoint", "RooflineRecord", "achieved",
                     "attainable", "classify", "precision_for", "roofline_point"), "engine.analysis.profile.roofline"),
    **dict.fromkeys(("FEATURES", "KernelReport", "StaticReport"), "engine.analysis.record"),
    "analyse_candidate": "engine.analysis.static",
    **dict.fromkeys(("fmt_bytes", "kernel_row", "kernel_rows", "launch_text", "model_text", "occupancy_of"),
                    "engine.analysis.summary"),
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr("engine.analysis", _EXPORTS)
