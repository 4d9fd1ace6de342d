"""The static estimate beside ncu's measurement, kernel by kernel.

Every profiled round stores this pair (global sectors per request for loads and stores, and
theoretical occupancy), so a user sees where the CPU-side model was right, and the pairs form a
calibration set; the library-wide agreement benchmark counts the same verdicts. Sectors agree
within 25 % or one sector (ncu's ratio is an average over every request, the estimate a
loop-weighted mean over source accesses); occupancy within one percentage point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.analysis.record import KernelReport, StaticReport

OCCUPANCY_TOLERANCE = 0.01  # one percentage point


def short_name(ncu_name: str) -> str:
    """The function name ncu's full (demangled, templated, namespaced) kernel name ends in."""
    name = ncu_name.split("(")[0].strip()
    name = re.sub(r"<.*>$", "", name)
    return name.split("::")[-1].split()[-1] if name else name


def agree_sectors(static: float | None, measured: float | None) -> bool | None:
    if static is None or measured is None:
        return None
    return abs(static - measured) <= max(1.0, 0.25 * measured)


def agree_occupancy(static: float | None, measured: float | None) -> bool | None:
    if static is None or measured is None:
        return None
    return abs(static - measured) <= OCCUPANCY_TOLERANCE


@dataclass(frozen=True)
class KernelAgreement:
    kernel: str
    static_ld: float | None
    ncu_ld: float | None
    static_st: float | None
    ncu_st: float | None
    static_occupancy: float | None
    ncu_theoretical_occupancy: float | None
    ncu_achieved_occupancy: float | None

    @property
    def ld_agree(self) -> bool | None:
        return agree_sectors(self.static_ld, self.ncu_ld)

    @property
    def st_agree(self) -> bool | None:
        return agree_sectors(self.static_st, self.ncu_st)

    @property
    def occupancy_agree(self) -> bool | None:
        return agree_occupancy(self.static_occupancy, self.ncu_theoretical_occupancy)

    def to_json(self) -> dict:
        return {**self.__dict__, "ld_agree": self.ld_agree, "st_agree": self.st_agree,
                "occupancy_agree": self.occupancy_agree}


def static_estimates(kernel: KernelReport | None, arch: str) -> dict[str, float | None]:
    """The static side of the comparison for one kernel (all None when the static report lacks it)."""
    occupancy = (kernel.occupancy.get(arch) or kernel.occupancy.get(arch.rstrip("a"))) if kernel else None
    return {"static_ld": kernel.sectors_per_request("load") if kernel else None,
            "static_st": kernel.sectors_per_request("store") if kernel else None,
            "static_occupancy": occupancy.occupancy if occupancy else None}


def _ratio(entries: list[dict], numerator: str, denominator: str) -> float | None:
    requests = sum(e.get(denominator, 0.0) for e in entries)
    return sum(e.get(numerator, 0.0) for e in entries) / requests if requests else None


def compare_kernels(report: StaticReport, per_kernel: dict[str, dict], arch: str) -> list[KernelAgreement]:
    """One row per kernel of the static report that ncu profiled (`per_kernel`: NcuSummary.per_kernel)."""
    measured: dict[str, list[dict]] = {}
    for name, entry in per_kernel.items():
        measured.setdefault(short_name(name), []).append(entry)
    rows = []
    for kernel in report.kernels:
        entries = measured.get(kernel.name)
        if not entries:
            continue
        theoretical = [e["theoretical_occupancy"] for e in entries if e.get("theoretical_occupancy") is not None]
        achieved = [e["achieved_occupancy"] for e in entries if e.get("achieved_occupancy") is not None]
        rows.append(KernelAgreement(
            kernel=kernel.name, **static_estimates(kernel, arch),
            ncu_ld=_ratio(entries, "ld_sectors", "ld_requests"), ncu_st=_ratio(entries, "st_sectors", "st_requests"),
            ncu_theoretical_occupancy=theoretical[-1] if theoretical else None,
            ncu_achieved_occupancy=achieved[-1] if achieved else None))
    return rows
