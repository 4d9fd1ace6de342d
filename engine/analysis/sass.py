"""SASS instruction mix per kernel from the cubin, by one nvdisasm call (cuobjdump as a fallback).

Static counts are not dynamic counts, so every class is also counted inside loops (between a
backward branch's target and the branch); those are the instructions that dominate run time.
Tensor-core use is read from the MMA opcodes only: `HFMA2.MMA` is a register move issued on the
MMA pipe, not tensor math.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from engine.build.tools import find_tool, tool_env

DISASSEMBLE_TIMEOUT_S = 60

_SECTION = re.compile(r"(?:\.text\.|Function : )(\S+?)(?:\s|$|,)")
_LABEL = re.compile(r"^\s*(\.L_x_\d+|\.L_\w+):")
_INSTRUCTION = re.compile(
    r"/\*([0-9a-fA-F]{4,})\*/\s+(?:(@!?U?P(?:T|\d+))\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);"
)
_TARGET_LABEL = re.compile(r"`\((\.L_\w+)\)")
_TARGET_HEX = re.compile(r"^\s*(0x[0-9a-fA-F]+)\s*$")

TENSOR_OPCODES = ("HMMA", "IMMA", "DMMA", "BMMA", "HGMMA", "IGMMA", "QGMMA", "BGMMA", "UTCHMMA", "UTCQMMA",
                  "UTCIMMA", "UTCMMA")
WGMMA_OPCODES = ("HGMMA", "IGMMA", "QGMMA", "BGMMA")
ATOMIC_OPCODES = ("ATOM", "ATOMG", "ATOMS", "RED", "REDG", "REDAS")


class DisassemblyError(RuntimeError):
    pass


@dataclass
class Instruction:
    address: int
    opcode: str  # with modifiers, e.g. "LDG.E.128.CONSTANT"
    operands: str
    predicate: str = ""
    loop_depth: int = 0

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


@dataclass
class InstructionMix:
    """Counts of the instruction classes that explain performance, for one kernel."""

    kernel: str
    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # class -> static count
    in_loop: dict[str, int] = field(default_factory=dict)  # class -> count inside some loop
    global_load_widths: dict[int, int] = field(default_factory=dict)  # bytes -> count
    global_store_widths: dict[int, int] = field(default_factory=dict)
    shared_load_widths: dict[int, int] = field(default_factory=dict)
    loops: int = 0
    max_loop_depth: int = 0

    def count(self, name: str) -> int:
        return self.counts.get(name, 0)

    @property
    def uses_tensor_cores(self) -> bool:
        return self.count("tensor") > 0

    @property
    def uses_wgmma(self) -> bool:
        return self.count("wgmma") > 0

    @property
    def max_global_width(self) -> int:
        widths = [*self.global_load_widths, *self.global_store_widths]
        return max(widths) if widths else 0

    @property
    def global_128_fraction(self) -> float:
        total = sum(self.global_load_widths.values()) + sum(self.global_store_widths.values())
        wide = self.global_load_widths.get(16, 0) + self.global_store_widths.get(16, 0)
        return wide / total if total else 0.0


def access_width(opcode: str) -> int:
    """Bytes per thread of a load/store opcode (`LDG.E.128` → 16, `LDG.E` → 4, `LDS.U8` → 1)."""
    mods = opcode.split(".")[1:]
    for mod, width in (("128", 16), ("64", 8), ("U16", 2), ("S16", 2), ("U8", 1), ("S8", 1)):
        if mod in mods:
            return width
    return 4


def classify(instruction: Instruction) -> list[str]:
    """The mix classes one instruction belongs to (usually one; none for plain integer/moves)."""
    op, base = instruction.opcode, instruction.base
    classes: list[str] = []
    if base in ("LDG", "LD") or op.startswith("LDG"):
        classes.append("global_load")
    elif base in ("STG", "ST"):
        classes.append("global_store")
    elif base == "LDS":
        classes.append("shared_load")
    elif base == "LDSM":
        classes += ["shared_load", "ldmatrix"]
    elif base == "STS":
        classes.append("shared_store")
    elif base == "LDGSTS":
        classes += ["global_load", "shared_store", "async_copy"]
    elif base in ("LDL", "STL"):
        classes.append("local_memory")
    elif base == "BAR":
        classes.append("barrier")
    elif base == "SHFL":
        classes.append("shuffle")
    elif base in ATOMIC_OPCODES:
        classes.append("atomic")
    elif base in TENSOR_OPCODES:
        classes.append("tensor")
        if base in WGMMA_OPCODES:
            classes.append("wgmma")
    elif base == "FFMA":
        classes.append("ffma")
    elif base == "FMUL":
        classes.append("fmul")
    elif base == "FADD":
        classes.append("fadd")
    elif base in ("DFMA", "DMUL", "DADD"):
        classes.append("fp64")
    elif base in ("HFMA2", "HMUL2", "HADD2") and ".MMA" not in op:
        classes.append("fp16")
    elif base == "MUFU":
        classes.append("mufu")
    elif base == "BRA" and instruction.predicate and instruction.predicate not in ("@PT",):
        classes.append("predicated_branch")
    return classes


def _parse_functions(text: str) -> dict[str, tuple[list[Instruction], int]]:
    functions: dict[str, list[Instruction]] = {}
    labels: dict[str, dict[str, int]] = {}
    current: str | None = None
    pending: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//---") and ".text." in stripped or stripped.startswith("Function :"):
            match = _SECTION.search(stripped)
            if match:
                current = match.group(1).rstrip("-").strip()
                functions.setdefault(current, [])
                labels.setdefault(current, {})
            continue
        if current is None:
            continue
        if match := _LABEL.match(line):
            pending.append(match.group(1))
            continue
        if match := _INSTRUCTION.search(line):
            address = int(match.group(1), 16)
            for label in pending:
                labels[current][label] = address
            pending = []
            functions[current].append(Instruction(address, match.group(3), match.group(4).strip(),
                                                  match.group(2) or ""))
    return {name: (instructions, _mark_loops(instructions, labels.get(name, {})))
            for name, instructions in functions.items()}


def _branch_target(instruction: Instruction, labels: dict[str, int]) -> int | None:
    if match := _TARGET_LABEL.search(instruction.operands):
        return labels.get(match.group(1))
    if match := _TARGET_HEX.match(instruction.operands):
        return int(match.group(1), 16)
    return None


def _mark_loops(instructions: list[Instruction], labels: dict[str, int]) -> int:
    """Loop depth per instruction: each backward branch closes a loop over [target, branch]; returns the loops."""
    loops = 0
    for branch in instructions:
        if branch.base != "BRA":
            continue
        target = _branch_target(branch, labels)
        if target is None or target >= branch.address:
            continue  # forward branch, or the self-loop `BRA` that pads the end of a kernel
        loops += 1
        for instruction in instructions:
            if target <= instruction.address <= branch.address:
                instruction.loop_depth += 1
    return loops


def mix_of(kernel: str, instructions: list[Instruction], loops: int = 0) -> InstructionMix:
    mix = InstructionMix(kernel=kernel, total=len(instructions), loops=loops)
    for instruction in instructions:
        mix.max_loop_depth = max(mix.max_loop_depth, instruction.loop_depth)
        for name in classify(instruction):
            mix.counts[name] = mix.counts.get(name, 0) + 1
            if instruction.loop_depth:
                mix.in_loop[name] = mix.in_loop.get(name, 0) + 1
            width = access_width(instruction.opcode)
            if name == "global_load":
                mix.global_load_widths[width] = mix.global_load_widths.get(width, 0) + 1
            elif name == "global_store":
                mix.global_store_widths[width] = mix.global_store_widths.get(width, 0) + 1
            elif name == "shared_load":
                mix.shared_load_widths[width] = mix.shared_load_widths.get(width, 0) + 1
    return mix


def parse_sass(text: str) -> dict[str, InstructionMix]:
    """Kernel symbol → instruction mix, from `nvdisasm -c` or `cuobjdump --dump-sass` text."""
    return {name: mix_of(name, instructions, loops) for name, (instructions, loops) in _parse_functions(text).items()}


def disassemble(cubin: Path, cache: bool = True) -> str:
    """SASS text of every kernel in `cubin`; kept beside it, since nvdisasm's start-up dominates its cost."""
    cached = cubin.with_suffix(".sass")
    if cache and cached.exists():
        return cached.read_text()
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm is not None:
        command = [str(nvdisasm), "-ndf", "-c", str(cubin)]
    elif (cuobjdump := find_tool("cuobjdump")) is not None:
        command = [str(cuobjdump), "--dump-sass", str(cubin)]
    else:
        raise DisassemblyError("neither nvdisasm nor cuobjdump found (pip install nvidia-cuda-nvdisasm)")
    done = subprocess.run(command, capture_output=True, text=True, timeout=DISASSEMBLE_TIMEOUT_S, env=tool_env())
    # cuobjdump reports a missing nvdisasm on stderr and still exits 0
    if done.returncode != 0 or "fatal" in done.stderr or not done.stdout.strip():
        raise DisassemblyError(f"{Path(command[0]).name} failed: {done.stderr.strip()[:300]}")
    if cache:
        with contextlib.suppress(OSError):
            cached.write_text(done.stdout)
    return done.stdout
