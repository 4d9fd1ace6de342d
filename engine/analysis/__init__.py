"""Diagnostics of candidates: static (ptxas resources, SASS mix with source lines, occupancy, source
structure, coalescing and bank-conflict estimates, per-warp branch splits and loop trip counts),
dynamic (ncu metrics, NVML energy), the roofline and a bottleneck class.

Entry points: `analyse_candidate` → `StaticReport` (no GPU needed); `analyse_file` → `FileAnalysis`
(the same report and the run's feedback for any CUDA file, `refinery analyze`); `profile_command` → `NcuProfile`
(ncu around any command); `profile_candidate` (ncu around one verified candidate, in the workers'
walls); `measure_energy`/`compare_energy`; `ceilings_for`/`measure_ceilings`;
`roofline_point`/`classify` (and `achieved`/`attainable`, the arithmetic the dashboard's roofline
draws with). What a run stores of all this is a typed record each, with `to_json`/`from_json`:
`StaticReport`, `RooflineRecord`, `NcuRecord` (`ncu_record`), `EnergyRecord`. Exports load lazily:
the GPU worker imports `engine.analysis.energy` and must not pull in the parsers (tree-sitter) the
static analysis needs.
"""

from __future__ import annotations

from engine.lazy_exports import lazy_getattr

_EXPORTS = {
    **dict.fromkeys(("BUILTIN", "DeviceCeilings", "ceilings_for", "match_device", "measure_ceilings",
                     "shown_ceilings"), "engine.analysis.devices"),
    **dict.fromkeys(("EnergyComparison", "EnergyMeasurement", "EnergyRecord", "EnergyUnavailable", "compare_energy",
                     "measure_energy"), "engine.analysis.energy"),
    **dict.fromkeys(("DEFAULT_METRICS", "NcuKernel", "NcuProfile", "NcuSummary", "parse_raw_csv",
                     "profile_command"), "engine.analysis.ncu"),
    **dict.fromkeys(("NcuRecord", "ncu_record"), "engine.analysis.ncu_record"),
    **dict.fromkeys(("Occupancy", "theoretical_occupancy"), "engine.analysis.occupancy"),
    **dict.fromkeys(("FEATURES", "KernelReport", "StaticReport"), "engine.analysis.record"),
    **dict.fromkeys(("Achieved", "Bottleneck", "Classification", "RooflinePoint", "RooflineRecord", "achieved",
                     "attainable", "classify", "precision_for", "roofline_point"), "engine.analysis.roofline"),
    "analyse_candidate": "engine.analysis.static",
    **dict.fromkeys(("FileAnalysis", "analyse_file"), "engine.analysis.standalone"),
    "profile_candidate": "engine.analysis.dynamic",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr("engine.analysis", _EXPORTS)
