"""SASS instruction mix per kernel from the cubin, by one nvdisasm call (cuobjdump as a fallback).

Static counts are not dynamic counts, so every class is also counted inside loops (between a
backward branch's target and the branch); those are the instructions that dominate run time.
Tensor-core use is read from the MMA opcodes only: `HFMA2.MMA` is a register move issued on the
MMA pipe, not tensor math. With `-lineinfo` builds, nvdisasm's `-gi` comments tie each instruction
to the source line it came from (the call site's line for inlined helpers), so a tool can say how
much of a kernel a branch holds and whether a source loop is still a loop in SASS.
"""

from __future__ import annotations

import contextlib
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from engine.toolchain import find_tool, tool_env

DISASSEMBLE_TIMEOUT_S = 60

_SECTION = re.compile(r"(?:\.text\.|Function : )(\S+?)(?:\s|$|,)")
_LABEL = re.compile(r"^\s*(\.L_x_\d+|\.L_\w+):")
_INSTRUCTION = re.compile(
    r"/\*([0-9a-fA-F]{4,})\*/\s+(?:(@!?U?P(?:T|\d+))\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);"
)
_TARGET_LABEL = re.compile(r"`\((\.L_\w+)\)")
_TARGET_HEX = re.compile(r"^\s*(0x[0-9a-fA-F]+)\s*$")
# `//## File "k.cu", line 12` (and `... line 3 inlined at "k.cu", line 12` before it): the last
# such comment before an instruction names the outermost frame, the line in the kernel itself
_LINE_INFO = re.compile(r'^\s*//## File "([^"]*)", line (\d+)')
_SUBROUTINE = re.compile(r"^\s*\$[\w$]+:")

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
    line: int | None = None  # source line, when the cubin carries line info

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


@dataclass(frozen=True)
class SassLoop:
    """One backward branch: the instructions it repeats and the source line it branches from."""

    branch_line: int | None
    instructions: int
    lines: tuple[int, ...] = ()  # distinct source lines of the repeated instructions


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
    line_instructions: dict[int, int] = field(default_factory=dict)  # source line -> static instructions
    sass_loops: list[SassLoop] = field(default_factory=list)

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

    @property
    def has_lines(self) -> bool:
        return bool(self.line_instructions)

    def instructions_on(self, first: int, last: int) -> int:
        """Static instructions attributed to source lines first..last (inclusive)."""
        return sum(count for line, count in self.line_instructions.items() if first <= line <= last)


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


def _parse_functions(text: str) -> dict[str, tuple[list[Instruction], list[SassLoop]]]:
    functions: dict[str, list[Instruction]] = {}
    labels: dict[str, dict[str, int]] = {}
    current: str | None = None
    pending: list[str] = []
    source_line: int | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//---") and ".text." in stripped or stripped.startswith("Function :"):
            match = _SECTION.search(stripped)
            if match:
                current = match.group(1).rstrip("-").strip()
                functions.setdefault(current, [])
                labels.setdefault(current, {})
                source_line = None
            continue
        if current is None:
            continue
        if match := _LINE_INFO.match(line):
            source_line = int(match.group(2))
            continue
        if _SUBROUTINE.match(line):
            source_line = None  # a called subroutine (slow-path math) has no line of the kernel's own
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
                                                  match.group(2) or "", line=source_line))
    return {name: (instructions, _mark_loops(instructions, labels.get(name, {})))
            for name, instructions in functions.items()}


def _branch_target(instruction: Instruction, labels: dict[str, int]) -> int | None:
    if match := _TARGET_LABEL.search(instruction.operands):
        return labels.get(match.group(1))
    if match := _TARGET_HEX.match(instruction.operands):
        return int(match.group(1), 16)
    return None


def _mark_loops(instructions: list[Instruction], labels: dict[str, int]) -> list[SassLoop]:
    """Loop depth per instruction: each backward branch closes a loop over [target, branch]; returns the loops."""
    loops = []
    for branch in instructions:
        if branch.base != "BRA":
            continue
        target = _branch_target(branch, labels)
        if target is None or target >= branch.address:
            continue  # forward branch, or the self-loop `BRA` that pads the end of a kernel
        body = [i for i in instructions if target <= i.address <= branch.address]
        for instruction in body:
            instruction.loop_depth += 1
        lines = tuple(sorted({i.line for i in body if i.line is not None}))
        loops.append(SassLoop(branch.line, len(body), lines))
    return loops


def mix_of(kernel: str, instructions: list[Instruction], loops: list[SassLoop] | None = None) -> InstructionMix:
    loops = loops or []
    mix = InstructionMix(kernel=kernel, total=len(instructions), loops=len(loops), sass_loops=loops)
    for instruction in instructions:
        if instruction.line is not None and instruction.base != "NOP":  # NOPs pad the end of the code
            mix.line_instructions[instruction.line] = mix.line_instructions.get(instruction.line, 0) + 1
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
    """SASS text of every kernel in `cubin`; kept beside it, since nvdisasm's start-up dominates its cost.

    nvdisasm adds the source line of each instruction (`-gi`: inlined helpers count at their call
    site); cuobjdump, the fallback, gives none, and the line-based estimates are then skipped.
    """
    cached = cubin.with_suffix(".lines.sass")
    if cache and cached.exists():
        return cached.read_text()
    nvdisasm = find_tool("nvdisasm")
    if nvdisasm is not None:
        command = [str(nvdisasm), "-gi", "-ndf", "-c", str(cubin)]
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
