"""Diagnostics of candidates: static (ptxas resources, SASS mix, occupancy, source structure,
coalescing and bank-conflict estimates), dynamic (ncu metrics, NVML energy), the roofline and a
bottleneck class.

Entry points: `analyse_candidate` → `StaticReport` (no GPU needed); `profile_command` → `NcuProfile`
(ncu around any command); `measure_energy`/`compare_energy`; `ceilings_for`/`measure_ceilings`;
`roofline_point`/`classify`. Submodules import lazily what they need (tree-sitter, pynvml, torch).
"""

from engine.analysis.devices import BUILTIN, DeviceCeilings, ceilings_for, match_device, measure_ceilings
from engine.analysis.energy import (
    EnergyComparison,
    EnergyMeasurement,
    EnergyUnavailable,
    compare_energy,
    measure_energy,
)
from engine.analysis.ncu import DEFAULT_METRICS, NcuKernel, NcuProfile, NcuSummary, parse_raw_csv, profile_command
from engine.analysis.occupancy import Occupancy, theoretical_occupancy
from engine.analysis.record import FEATURES, KernelReport, StaticReport
from engine.analysis.roofline import Bottleneck, Classification, RooflinePoint, classify, precision_for, roofline_point
from engine.analysis.static import analyse_candidate

__all__ = [
    "BUILTIN", "DEFAULT_METRICS", "FEATURES", "Bottleneck", "Classification", "DeviceCeilings", "EnergyComparison",
    "EnergyMeasurement", "EnergyUnavailable", "KernelReport", "NcuKernel", "NcuProfile", "NcuSummary", "Occupancy",
    "RooflinePoint", "StaticReport", "analyse_candidate", "ceilings_for", "classify", "compare_energy",
    "match_device", "measure_ceilings", "measure_energy", "parse_raw_csv", "precision_for", "profile_command",
    "roofline_point", "theoretical_occupancy",
]
