"""Warp tools: branches that split a warp's lanes, loops that give threads unequal work, and short
loops of a compile-time trip count that the compiler left rolled.

Each reads the control-flow estimates of the static report (`engine.analysis.source.control`): the
lanes of every warp of one block evaluated on the branch condition or the loop bounds, weighed
by the SASS instructions on the source lines involved.
"""

from __future__ import annotations

from engine.analysis import Bottleneck as B
from engine.feedback.model import Diagnostics, Finding
from engine.feedback.registry import tool
from engine.feedback.text import code

DIVERGENCE_WASTE = 0.15  # lane slots lost over the region's work, below which a split is not worth a finding
DIVERGENCE_MIN_INSTRUCTIONS = 6  # an arm smaller than this (a guarded store, a lane-0 write) costs nothing
# a branch on data each lane loads: the extra work of a mixed warp (see `_data_branch`), as a share of the
# region (the loop body, or the kernel) and in instructions, below which it costs too little to name
DATA_BRANCH_SHARE = 0.2
DATA_BRANCH_MIN_INSTRUCTIONS = 24
IMBALANCE = 0.3  # 1 - mean/max trip count over a block
IMBALANCE_MIN_TRIPS = 8
UNROLL_MAX_TRIPS = 32  # "short": a full unroll of more trips bloats the code for little gain
UNROLL_MIN_BODY = 3
UNROLL_MAX_ROLLED = 48  # SASS instructions per trip above which the counter and branch cost too little to matter
LOOP_CONTROL = 3  # a rolled loop's own instructions per trip: counter update, compare, branch


def _kernels(d: Diagnostics):
    return d.static.kernels if d.static is not None else []


def _lanes(count: float, lanes: int) -> str:
    return "half the lanes" if abs(count - lanes / 2) < 0.5 else f"{lanes - count:.0f} of {lanes} lanes"


@tool("divergence", serves=(B.COMPUTE, B.LATENCY, B.MEMORY))
def divergence(d: Diagnostics) -> list[Finding]:
    """Branches on the thread index that split the lanes of a warp around substantial work."""
    findings = []
    for kernel in _kernels(d):
        for branch in kernel.branches:
            if branch.block_exit:
                continue  # whole blocks leaving: a launch-configuration question (see `launch_configuration`)
            if branch.data_source:
                findings.extend(_data_branch(branch))
                continue
            arms = branch.then_cost + branch.else_cost
            small = arms < (DIVERGENCE_MIN_INSTRUCTIONS if branch.unit == "SASS instructions" else 2)
            if small or branch.waste < DIVERGENCE_WASTE:
                continue
            where = "the loop's" if branch.in_loop else "the kernel's"
            per = " per trip" if branch.in_loop else ""
            warps = (f"all {branch.warps} warps" if branch.divergent_warps == branch.warps > 1 else
                     "the warp" if branch.warps == 1 else f"{branch.divergent_warps} of {branch.warps} warps")
            if branch.has_else:
                taken = f"{branch.active_lanes:.0f}/{branch.lanes - branch.active_lanes:.0f}"
                evidence = (f"{code(branch.condition)} splits the lanes of {warps} of a block {taken} between the "
                            f"arms: each warp runs both, {arms} of {where} {branch.region_cost} {branch.unit}{per}, "
                            f"with {branch.idle_share:.0%} of its lanes idle")
            else:
                evidence = (f"{code(branch.condition)} splits {warps} of a block: "
                            f"{_lanes(branch.active_lanes, branch.lanes)} idle in {arms} of {where} "
                            f"{branch.region_cost} {branch.unit}{per}")
            findings.append(Finding(
                tool="divergence", category="warp/divergence", title="warp-divergent branch", evidence=evidence,
                suggestion="make the condition the same for all 32 lanes of a warp: remap the work so neighbouring "
                           "threads take the same path (branch on threadIdx.x / 32, or give the active threads "
                           "consecutive indices, e.g. `tid < s` with a halving s instead of `tid % (2 * s) == 0` "
                           "in a reduction)",
                severity=min(0.75, 0.15 + branch.waste), value=round(branch.idle_share, 3), kernel=kernel.name,
                line=branch.line))
    return findings


def _data_branch(branch) -> list[Finding]:
    """A branch on a value each lane loads from its own address: a warp whose lanes disagree runs both arms
    (or idles the lanes that skip), and which lanes disagree is known only from the data."""
    # what a mixed warp runs beyond a uniform one: the shorter arm (both run), or the arm the skipping lanes wait out
    extra = min(branch.then_cost, branch.else_cost) if branch.has_else else branch.then_cost
    minimum = DATA_BRANCH_MIN_INSTRUCTIONS if branch.unit == "SASS instructions" else 3
    if extra < minimum or not branch.region_cost or extra / branch.region_cost < DATA_BRANCH_SHARE:
        return []
    where = "the loop's" if branch.in_loop else "the kernel's"
    per = " per trip" if branch.in_loop else ""
    loaded = (f"each of a warp's {branch.lanes} lanes tests its own value ({code(branch.data_source)}, loaded from "
              f"{branch.data_groups} different addresses)")
    if branch.has_else:
        evidence = (f"{code(branch.condition)}: {loaded}, so a warp whose lanes disagree runs both arms one after the "
                    f"other, {branch.then_cost} + {branch.else_cost} of {where} {branch.region_cost} "
                    f"{branch.unit}{per}, each with the other arm's lanes idle")
        change = ("decide per warp, not per lane: branch on a warp vote (`if (__all_sync(0xffffffff, cond))` takes the "
                  "fast arm only when every lane can, the general arm otherwise), or sort or bin the items so the "
                  "lanes of a warp agree")
    else:
        evidence = (f"{code(branch.condition)}: {loaded}, so the lanes that skip the arm idle while the others run "
                    f"it ({branch.then_cost} of {where} {branch.region_cost} {branch.unit}{per}); the skip saves "
                    "time only when all 32 lanes of a warp skip together")
        change = ("do the arm's work unconditionally (weight the result by zero instead of skipping it), or skip on "
                  "a warp vote (`if (__any_sync(0xffffffff, cond))`) so a warp skips only when all its lanes can")
    return [Finding(tool="divergence", category="warp/divergence", title="data-dependent warp-divergent branch",
                    evidence=evidence, suggestion=change, severity=min(0.6, 0.2 + 0.5 * branch.arm_share),
                    value=round(branch.arm_share, 3), kernel=branch.kernel, line=branch.line)]


@tool("imbalanced-work", serves=(B.MEMORY, B.LATENCY, B.COMPUTE))
def imbalanced_work(d: Diagnostics) -> list[Finding]:
    """Loops whose trip count differs from thread to thread: a warp (and a block) waits for its longest thread."""
    findings = []
    for kernel in _kernels(d):
        for loop in kernel.loops:
            if loop.data_groups >= loop.lanes > 1:
                findings.append(Finding(
                    tool="imbalanced-work", category="warp/imbalanced-work", title="one work item per thread",
                    evidence=f"each of a warp's {loop.data_groups} lanes reads its own loop bound "
                             f"({code(loop.data_source)} in {code(loop.header)}): the warp runs as long as its "
                             "longest item while the lanes that finished idle",
                    suggestion="give each item a warp (or a group of lanes sized to the typical item) that strides "
                               "through it by lane and reduces with __shfl_down_sync; for very uneven items, balance "
                               "by the work itself (bin items by length, or split the total work evenly as in "
                               "merge-path SpMV)",
                    severity=0.55, value=float(loop.data_groups), kernel=kernel.name, line=loop.line))
            elif loop.trips is not None and loop.trips[2] >= IMBALANCE_MIN_TRIPS and loop.imbalance >= IMBALANCE:
                low, mean, high = loop.trips
                findings.append(Finding(
                    tool="imbalanced-work", category="warp/imbalanced-work", title="imbalanced work per thread",
                    evidence=f"{code(loop.header)} runs {low} to {high} trips per thread of a block (mean "
                             f"{mean:.1f}, bound {code(loop.bound)}): {loop.imbalance:.0%} of the lane iterations "
                             "wait for the longest thread",
                    suggestion="give every thread the same number of trips: pair a short and a long item per thread "
                               "(thread t also takes n - 1 - t of a triangle), or flatten the iteration space and "
                               "split it evenly over the threads",
                    severity=min(0.7, 0.2 + 0.6 * loop.imbalance), value=round(loop.imbalance, 3),
                    kernel=kernel.name, line=loop.line))
    return findings


@tool("unrolling", serves=(B.COMPUTE, B.LATENCY, B.MEMORY))
def unrolling(d: Diagnostics) -> list[Finding]:
    """Short loops with a compile-time trip count that SASS still runs as a loop (or `#pragma unroll 1` forbids)."""
    findings = []
    for kernel in _kernels(d):
        for loop in kernel.loops:
            if (launched := _launch_fixed(loop, kernel)) is not None:
                findings.append(launched)
                continue
            trips = loop.constant_trips
            if trips is None or not 2 <= trips <= UNROLL_MAX_TRIPS or loop.body_cost < UNROLL_MIN_BODY:
                continue
            forbidden = loop.unroll_pragma == "1"
            if not (loop.rolled or forbidden) or (loop.sass_instructions or 0) > UNROLL_MAX_ROLLED:
                continue
            hot = loop.loop_depth > 0
            evidence = f"{code(loop.header)}{' (inside an outer loop)' if hot else ''} runs {trips} trips fixed at " \
                       "compile time"
            factor = int(loop.unroll_pragma) if (loop.unroll_pragma or "").isdigit() else 1
            if loop.rolled and loop.sass_instructions:
                evidence += (f", yet SASS keeps it a loop: a backward branch repeats {loop.sass_instructions} "
                             f"instructions {-(-trips // max(1, factor))} times, about "
                             f"{min(LOOP_CONTROL, loop.sass_instructions)} of them the counter, compare and branch")
                if factor > 1:
                    evidence += f" (`#pragma unroll {factor}` asked for {factor} copies per trip)"
            elif loop.rolled:
                evidence += ", yet SASS keeps it a loop"
            if forbidden:
                evidence += "; `#pragma unroll 1` forbids unrolling it"
            findings.append(Finding(
                tool="unrolling", category="warp/unrolling", title="short loop not unrolled", evidence=evidence,
                suggestion=("replace `#pragma unroll 1` by `#pragma unroll`" if forbidden else
                            "put `#pragma unroll` before it") +
                           ": a fully unrolled loop drops the counter and the branch, turns its indices into "
                           "constant offsets and keeps per-thread arrays in registers",
                severity=0.45 if hot else 0.3, value=float(trips), kernel=kernel.name, line=loop.line))
    return findings


def _launch_fixed(loop, kernel) -> Finding | None:
    """A short loop whose trip count every launch fixes (the block size, a launch-time parameter) but the
    compiler cannot see, kept rolled: the block size as a template parameter (or a constant) lets it unroll.
    Only loops bound by blockDim/gridDim or already marked for the compiler (`#pragma unroll 1`) are named: a
    loop over a run-time size is the kernel's choice, not a missed unrolling."""
    trips = loop.launch_trips
    if trips is None or not 2 <= trips <= UNROLL_MAX_TRIPS or loop.body_cost < UNROLL_MIN_BODY:
        return None
    by_block = [name for name in loop.launch_names if name.startswith(("blockDim", "gridDim"))]
    forbidden = loop.unroll_pragma == "1"
    if not (loop.rolled or forbidden) or not (by_block or forbidden):
        return None
    if (loop.sass_instructions or 0) > UNROLL_MAX_ROLLED:
        return None
    fixed_by = ", ".join(f"`{name}`" for name in loop.launch_names)
    value = f"{trips} trips"
    evidence = (f"{code(loop.header)} runs {value} for every thread, fixed by the launch ({fixed_by}) but not at "
                "compile time, so the compiler cannot unroll it")
    if loop.rolled and loop.sass_instructions:
        evidence += f": SASS repeats {loop.sass_instructions} instructions {trips} times behind a backward branch"
    if forbidden:
        evidence += "; `#pragma unroll 1` forbids unrolling it"
    what = "the block size" if by_block else "that parameter"
    return Finding(
        tool="unrolling", category="warp/unrolling", title="loop fixed by the launch, not unrolled",
        evidence=evidence,
        suggestion=f"make {what} a compile-time constant (a template parameter the launch instantiates, e.g. "
                   "`reduce<256><<<grid, 256>>>`, or a #define) and put `#pragma unroll` before the loop: "
                   "the counter, the compare and the branch disappear and indices become constant offsets",
        severity=0.45 if loop.loop_depth > 0 else 0.35, value=float(trips), kernel=kernel.name, line=loop.line)
