"""Per-kernel resource usage from the `ptxas -v` log that every analysis build keeps.

ptxas is the only source of the register count and spill bytes the hardware will see; cuobjdump's
SHARED column includes the 1 KiB driver reservation on sm_90 cubins, so shared memory is taken
from here too (it matches `cudaFuncAttributes.sharedSizeBytes`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_PROPERTIES = re.compile(r"Function properties for (\S+)")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")
_SMEM_ANYWHERE = re.compile(r"(\d+) bytes smem")
_CUMULATIVE = re.compile(r"(\d+) bytes cumulative stack size")


@dataclass(frozen=True)
class KernelResources:
    """What ptxas allocated for one `__global__` entry point."""

    name: str  # the symbol as ptxas prints it (mangled for C++ kernels)
    arch: str
    registers: int
    smem_bytes: int = 0  # static shared memory, without the driver's per-block reservation
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0
    cumulative_stack_bytes: int = 0

    @property
    def spill_bytes(self) -> int:
        return self.spill_stores + self.spill_loads


def parse_ptxas_log(log: str) -> dict[str, KernelResources]:
    """Entry name → resources, in the order ptxas compiled them; device functions are skipped."""
    found: dict[str, dict] = {}
    current: str | None = None
    properties_for: str | None = None
    for line in log.splitlines():
        if match := _ENTRY.search(line):
            current = match.group(1)
            found[current] = {"name": current, "arch": match.group(2), "registers": 0}
            continue
        if match := _PROPERTIES.search(line):
            properties_for = match.group(1)
            continue
        if match := _FRAME.search(line):
            target = properties_for if properties_for in found else None
            if target is not None:
                found[target].update(stack_bytes=int(match.group(1)), spill_stores=int(match.group(2)),
                                     spill_loads=int(match.group(3)))
            continue
        if current is None:
            continue
        if match := _USED.search(line):
            entry = found[current]
            entry["registers"] = int(match.group(1))
            entry["barriers"] = int(match.group(2) or 0)
            smem = match.group(3)
            if smem is None and (alt := _SMEM_ANYWHERE.search(line)):
                smem = alt.group(1)
            entry["smem_bytes"] = int(smem or 0)
            if cumulative := _CUMULATIVE.search(line):
                entry["cumulative_stack_bytes"] = int(cumulative.group(1))
        elif match := _CUMULATIVE.search(line):
            found[current]["cumulative_stack_bytes"] = int(match.group(1))
    return {name: KernelResources(**fields) for name, fields in found.items()}


def demangle_kernel_name(symbol: str) -> str:
    """The source-level name of a kernel symbol (`_Z15transpose_tilediiPKfPf` → `transpose_tiled`).

    Only the Itanium rules a kernel name needs: plain `_Z<len><name>` and nested `_ZN<len><ns>…E`
    (the last component is the function). extern "C" names come back unchanged.
    """
    if not symbol.startswith("_Z"):
        return symbol
    rest = symbol[2:]
    nested = rest.startswith("N")
    if nested:
        rest = rest[1:]
    parts: list[str] = []
    while rest and rest[0].isdigit():
        digits = re.match(r"\d+", rest).group(0)
        length = int(digits)
        parts.append(rest[len(digits):len(digits) + length])
        rest = rest[len(digits) + length:]
        if not nested:
            break
        if rest.startswith("I"):  # template arguments of a nested name: stop at the function
            break
    return parts[-1] if parts else symbol
