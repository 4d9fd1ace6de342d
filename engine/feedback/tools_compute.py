"""Compute tools: tensor cores left unused (or silently not used), atomics contention, the warp
stall that dominates, and how close to its roof a kernel already is."""

from __future__ import annotations

from engine.analysis import Bottleneck as B
from engine.feedback.model import Diagnostics, Finding
from engine.feedback.registry import tool

TENSOR_DTYPES = ("float16", "bfloat16", "tf32")
MATMUL_WORDS = ("matmul", "gemm", "conv", "attention", "bmm", "linear")
STALL_ADVICE = {
    "long_scoreboard": ("warps wait on global-memory loads",
                        "keep more loads in flight: more independent work per thread, prefetch the next tile into "
                        "registers/shared memory, or raise occupancy"),
    "mio_throttle": ("the shared-memory pipe is saturated",
                     "load wider (LDS.128) or reuse values in registers: register tiling cuts shared traffic"),
    "short_scoreboard": ("warps wait on shared memory or special-function results",
                         "remove shared-memory bank conflicts and hoist MUFU work out of inner loops"),
    "lg_throttle": ("the load/store queue is full of small global requests",
                    "use 128-bit accesses so fewer requests carry the same bytes"),
    "math_pipe_throttle": ("a math pipe is saturated",
                           "move the hot arithmetic to tensor cores or a cheaper instruction mix"),
    "barrier": ("warps wait at __syncthreads", "do more work between barriers or drop unnecessary ones"),
    "membar": ("warps wait on memory fences", "avoid __threadfence in the hot path"),
    "branch_resolving": ("warps wait on divergent branches", "make branch conditions uniform across a warp"),
    "wait": ("fixed-latency dependencies dominate", "unroll to interleave independent instructions"),
}


def _matmul_like(d: Diagnostics) -> bool:
    tags = " ".join(getattr(d.problem, "tags", ()) or ()) + " " + (getattr(d.problem, "slug", "") or "")
    return any(word in tags.lower() for word in MATMUL_WORDS) or d.feature("arithmetic_intensity") >= 50


@tool("tensor-cores", serves=(B.COMPUTE,))
def tensor_cores(d: Diagnostics) -> list[Finding]:
    """A compute-bound half/bf16/tf32 contraction that does not reach the tensor cores."""
    if d.static is None or not d.static.kernels:
        return []
    uses = d.feature("uses_tensor_cores") > 0
    api = d.feature("tensor_core_api") > 0
    if uses:
        if d.ncu is not None and d.ncu.tensor_pipe_pct is not None and d.ncu.tensor_pipe_pct < 20 \
                and d.bottleneck is B.COMPUTE:
            return [Finding(
                tool="tensor-cores", category="algorithm/hardware-unaware", title="tensor cores mostly idle",
                evidence=f"the tensor pipe is active {d.ncu.tensor_pipe_pct:.0f}% of the time",
                suggestion="feed the MMAs faster: stage tiles in shared memory with cp.async double buffering and "
                           "issue several MMAs per loaded fragment", severity=0.5, value=d.ncu.tensor_pipe_pct)]
        return []
    if api:
        return [Finding(
            tool="tensor-cores", category="compilation/silent-fallback", title="tensor-core code without MMA",
            evidence="the source calls wmma/mma but the SASS has no HMMA/HGMMA instruction",
            suggestion="check the architecture flags and fragment types: the MMA path was compiled out",
            severity=0.7, value=0.0)]
    if d.dtype not in TENSOR_DTYPES or not _matmul_like(d):
        return []
    intensity = d.feature("arithmetic_intensity")
    return [Finding(
        tool="tensor-cores", category="algorithm/hardware-unaware", title="tensor cores unused",
        evidence=f"a {d.dtype} contraction at {intensity:.0f} FLOP/byte runs on FFMA: the tensor-core peak is "
                 "about 15x the FP32 one",
        suggestion="compute the tiles with WMMA (nvcuda::wmma 16x16x16 fragments) or mma.sync, accumulating in "
                   "float", severity=0.9, value=intensity)]


@tool("atomics", serves=(B.LATENCY, B.MEMORY))
def atomics(d: Diagnostics) -> list[Finding]:
    """Atomics issued by every thread in a loop: contention serialises them on one address."""
    findings = []
    for kernel in d.static.kernels if d.static is not None else []:
        source = kernel.source
        if source is None or not source.atomics_in_loop or source.shuffles:
            continue
        findings.append(Finding(
            tool="atomics", category="memory/redundant-access", title="atomics in a loop",
            evidence=f"{source.atomics_in_loop} atomic call(s) inside a loop, one per element per thread",
            suggestion="accumulate in a register first, reduce across the warp with __shfl_down_sync, and issue "
                       "one atomic per warp (or per block through shared memory)", severity=0.6,
            value=float(source.atomics_in_loop), kernel=kernel.name))
    return findings


@tool("warp-stalls", serves=(B.LATENCY, B.COMPUTE))
def warp_stalls(d: Diagnostics) -> list[Finding]:
    """The stall reason that dominates warp time, translated to its usual cause and fix."""
    if d.ncu is None or not d.ncu.top_stalls:
        return []
    reason, value = d.ncu.top_stalls[0]
    total = sum(v for _, v in d.ncu.top_stalls)
    if reason not in STALL_ADVICE or reason == "barrier" or total <= 0 or value / total < 0.35:
        return []
    cause, fix = STALL_ADVICE[reason]
    return [Finding(
        tool="warp-stalls", category="warp/stalls", title=f"dominant stall: {reason.replace('_', ' ')}",
        evidence=f"{cause}: {value:.1f} warps stalled per issued instruction, {value / total:.0%} of the top reasons",
        suggestion=fix, severity=0.4, value=value)]


@tool("roofline-headroom", serves=(B.MEMORY, B.COMPUTE))
def roofline_headroom(d: Diagnostics) -> list[Finding]:
    """A kernel already near its roof: more speed has to come from less work, not better scheduling."""
    point = d.roofline
    if point is None or point.pct_of_roof < 0.8:
        return []
    if point.bound == "memory":
        evidence = (f"{point.achieved_bandwidth / 1e12:.2f} TB/s is {point.pct_of_roof:.0%} of the "
                    f"{point.peak_bandwidth / 1e12:.2f} TB/s DRAM roof ({point.source})")
        fix = "move fewer bytes: fuse with the neighbouring op, reuse data from L2/shared memory, or read inputs once"
    else:
        evidence = (f"{point.achieved_flops / 1e12:.1f} TFLOP/s is {point.pct_of_roof:.0%} of the "
                    f"{point.precision} roof ({point.source})")
        fix = "do fewer FLOPs (algebraic simplification) or move to a faster pipe (tensor cores)"
    return [Finding(tool="roofline-headroom", category="algorithm/at-roof", title="near the roofline",
                    evidence=evidence, suggestion=fix, severity=0.1, value=point.pct_of_roof)]
