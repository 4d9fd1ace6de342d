"""Memory tools: uncoalesced global access, shared-memory bank conflicts, missing vectorisation,
and intermediates that go through DRAM between kernels (fusion)."""

from __future__ import annotations

from engine.analysis import Bottleneck as B
from engine.analysis import fmt_bytes
from engine.analysis.source.access import AccessEstimate
from engine.feedback.model import Diagnostics, Finding
from engine.feedback.registry import tool
from engine.feedback.text import code

UNCOALESCED_EXCESS = 2.0  # sectors per request over the ideal beyond which it is worth a finding
BANK_CONFLICT_WAYS = 2.0


@tool("coalescing", serves=(B.MEMORY, B.LATENCY, B.COMPUTE))
def coalescing(d: Diagnostics) -> list[Finding]:
    """Global accesses that touch more 32-byte sectors per warp request than their width needs."""
    findings = []
    measured = {}
    if d.ncu is not None:
        measured = {"load": d.ncu.ld_sectors_per_request, "store": d.ncu.st_sectors_per_request}
    for kernel in d.static.kernels if d.static is not None else []:
        worst = kernel.worst_access()
        if worst is None or worst.excess <= UNCOALESCED_EXCESS:
            continue
        verb = {"load": "read", "store": "write", "atomic": "update"}[worst.kind]
        noun = "loads" if worst.kind == "load" else "stores"
        sectors = worst.sectors
        source = "estimated"
        ncu_value = measured.get("store" if worst.kind != "load" else "load")
        if ncu_value is not None and ncu_value >= worst.ideal_sectors * UNCOALESCED_EXCESS:
            sectors, source = ncu_value, "measured"
        findings.append(Finding(
            tool="coalescing", category="memory/uncoalesced-access",
            title=f"uncoalesced global {noun}",
            evidence=f"{code(worst.expression)} averages {sectors:.3g} sectors per request ({source}; ideal "
                     f"{worst.ideal_sectors}): {_apart(worst, verb)}{_sass_width(kernel.mix, worst)}",
            suggestion=_coalescing_change(worst),
            severity=min(0.95, 1.0 - 1.0 / (sectors / worst.ideal_sectors)), value=float(sectors),
            kernel=kernel.name, line=worst.line))
    if not findings and d.ncu is not None and d.static is not None:
        for kind, value in measured.items():
            ideal = 4 * max(1.0, d.feature("vector_width", 4) / 4)
            if value is not None and value > ideal * UNCOALESCED_EXCESS:
                findings.append(Finding(
                    tool="coalescing", category="memory/uncoalesced-access", title=f"uncoalesced global {kind}s",
                    evidence=f"global {kind}s average {value:.1f} sectors per request (measured; ideal {ideal:.0f})",
                    suggestion="make consecutive threads (threadIdx.x) access consecutive addresses",
                    severity=min(0.9, 1.0 - ideal / value), value=value))
    return findings


def _apart(access: AccessEstimate, verb: str) -> str:
    """Why the warp's request touches that many sectors, in the access's own terms."""
    if access.own_pointers:
        return (f"each thread {verb}s from its own start address (from {code(access.own_pointers)}) and walks it in "
                f"a loop {access.elem_bytes} byte(s) at a time, so the lanes of one request are in as many different "
                "places")
    stride = access.lane_stride_bytes
    if not stride:
        return "the warp's addresses are scattered"
    text = f"neighbouring threads {verb} addresses {fmt_bytes(stride)} apart"
    if access.struct_name:
        text += (f" ({access.array} holds {access.struct_name} structs of {access.struct_bytes} bytes and each lane "
                 f"{verb}s one {access.elem_bytes}-byte member of its own)")
    return text


def _sass_width(mix, access: AccessEstimate) -> str:
    """The access's width with the SASS counts that show it (`; 8-bit loads: LDG 65 (1×64-bit, 64×8-bit)`),
    so the words and the instruction counts printed beside them agree."""
    if mix is None:
        return ""
    verb, widths = ("LDG", mix.global_load_widths) if access.kind == "load" else ("STG", mix.global_store_widths)
    if not widths.get(access.elem_bytes):
        return ""
    detail = ", ".join(f"{count}×{width * 8}-bit" for width, count in sorted(widths.items(), reverse=True))
    noun = "load" if access.kind == "load" else "store"
    bits = access.elem_bytes * 8
    article = "an" if bits == 8 else "a"
    return f"; each is {article} {bits}-bit {noun} (SASS: {verb} {sum(widths.values())}: {detail})"


def _coalescing_change(access: AccessEstimate) -> str:
    if access.own_pointers or (access.loop_depth > 0 and access.kind == "load" and access.lane_stride_bytes
                               and access.lane_stride_bytes >= 32 * access.elem_bytes):
        return (f"let the lanes of a warp walk one row of {access.array} together (lane k reads elements k, k + 32, "
                "...; a warp-wide reduction combines them) instead of one row per thread, or stage the rows through "
                "shared memory with coalesced loads")
    if access.struct_name:
        return (f"store {access.struct_name}'s fields as separate arrays (one array per field, structure of arrays) "
                f"so neighbouring threads touch neighbouring {access.elem_bytes}-byte words")
    return (f"make threadIdx.x index the contiguous dimension of {access.array}"
            + ("; for a transpose, stage a tile through shared memory so both the read and the write are row-wise"
               if access.kind != "load" or access.loop_depth == 0 else
               "; if the loop walks that dimension, swap the loop and thread mappings"))


@tool("bank-conflicts", serves=(B.MEMORY, B.COMPUTE, B.LATENCY))
def bank_conflicts(d: Diagnostics) -> list[Finding]:
    """Shared-memory accesses whose lanes collide in the same bank and are serialised."""
    findings = []
    measured = None
    if d.ncu is not None and d.ncu.shared_ld_wavefronts_per_request:
        measured = d.ncu.shared_ld_wavefronts_per_request
    for kernel in d.static.kernels if d.static is not None else []:
        worst = _costly_shared_access(kernel)
        if worst is None:
            continue
        ways = worst.excess
        measured_note = f"; ncu measured {measured:.1f} wavefronts per shared load" if measured else ""
        stride_words = (worst.lane_stride_bytes or 0) // 4
        why = f": neighbouring lanes are {stride_words} words apart, so {ways:.0f} of them share a bank" \
            if stride_words else ""
        findings.append(Finding(
            tool="bank-conflicts", category="memory/shared-bank-conflict", title="shared-memory bank conflicts",
            evidence=f"{code(worst.expression)} is a {ways:.0f}-way bank conflict (estimated){measured_note}"
                     f"{_declared(worst)}{why}",
            suggestion=_padding(worst), severity=min(0.85, 0.8 * (1.0 - 1.0 / ways)), value=ways,
            kernel=kernel.name, line=worst.line))
    if not findings and measured is not None and measured >= BANK_CONFLICT_WAYS * 1.5:
        findings.append(Finding(
            tool="bank-conflicts", category="memory/shared-bank-conflict", title="shared-memory bank conflicts",
            evidence=f"{measured:.1f} wavefronts per shared load instruction (measured; 1 is conflict-free)",
            suggestion="pad shared arrays by one element per row or swizzle the index",
            severity=min(0.8, 0.8 * (1.0 - 1.0 / measured)), value=measured))
    return findings


def _costly_shared_access(kernel) -> AccessEstimate | None:
    """The worst shared access worth a finding: at least BANK_CONFLICT_WAYS, and a 2-way conflict only where a
    loop repeats it (once per block outside loops it costs one extra wavefront: padding often leaves one such
    pair, e.g. row 0's first word and row 1's last of a [16][17] tile read by 16 x 2 lanes)."""
    costly = [a for a in kernel.accesses if a.space == "shared" and a.wavefronts is not None
              and a.excess >= BANK_CONFLICT_WAYS and (a.excess > BANK_CONFLICT_WAYS or a.loop_depth > 0)]
    return max(costly, key=lambda a: (a.excess, a.weight)) if costly else None


def _extents(dims: tuple[int | None, ...]) -> str:
    return "".join(f"[{d if d is not None else ''}]" for d in dims)


def _declared(access: AccessEstimate) -> str:
    """`; tile is declared [32][32] (4-byte elements)` when the extents are known from the declaration."""
    if len(access.dims) < 2 or access.dims[-1] is None:
        return ""
    return f"; {access.array} is declared {_extents(access.dims)} ({access.elem_bytes}-byte elements)"


def _padding(access: AccessEstimate) -> str:
    """The tile's declaration with the row length the access model found best (`tile[32][33]`), or the
    general advice when no row length near the declared one lowers the tile's wavefronts."""
    if access.padded_extent is not None and len(access.dims) >= 2:
        padded = (*access.dims[:-1], access.padded_extent)
        change = "pad each row" if access.padded_extent > (access.dims[-1] or 0) else "shorten each row"
        return (f"{change}: declare {code(access.array + _extents(padded))} instead of "
                f"{code(access.array + _extents(access.dims))}: the model then gives this access "
                f"{access.padded_wavefronts} wavefront(s) per request, and the tile's accesses fewer in all (or "
                "swizzle the index, e.g. column ^ row)")
    return (f"pad {access.array}'s rows by one element (e.g. [TILE][TILE + 1], or a row stride of TILE + 1 in a "
            "flat index) or swizzle the index so a warp's lanes fall in different banks")


@tool("vectorization", serves=(B.MEMORY, B.LATENCY))
def vectorization(d: Diagnostics) -> list[Finding]:
    """Coalesced but scalar global accesses in a memory-bound kernel: 128-bit accesses need 4x fewer requests."""
    if d.static is None or not d.static.kernels:
        return []
    findings = []
    for kernel in d.static.kernels:
        mix = kernel.mix
        if mix is None or not (mix.global_load_widths or mix.global_store_widths):
            continue
        if mix.max_global_width >= 16:
            continue
        accesses = kernel.global_accesses()
        if not accesses or any(a.excess > UNCOALESCED_EXCESS for a in accesses):
            continue  # fix coalescing first; vectorising a strided access does not help
        if d.dtype not in ("float32", "float16", "bfloat16", "int32"):
            continue
        source = kernel.source
        wrote_vectors = source is not None and source.vector_types > 0
        queue_full = _lg_throttled(d)
        if not (wrote_vectors or queue_full):
            continue  # narrow accesses alone are nearly every kernel: a finding needs a sign they cost something
        width = mix.max_global_width
        total = sum(mix.global_load_widths.values()) + sum(mix.global_store_widths.values())
        evidence = (f"all {total} global memory instructions are at most {width * 8}-bit ({_widths(mix)})"
                    + (" although the source uses vector types: the compiler could not prove 16-byte alignment"
                       if wrote_vectors else "")
                    + ("; ncu's dominant stall is lg_throttle: the load/store queue is full of small requests"
                       if queue_full else ""))
        findings.append(Finding(
            tool="vectorization", category="memory/access-width", title="scalar global accesses",
            evidence=evidence,
            suggestion="load and store float4 (or int4) per thread: reinterpret_cast<const float4*> on 16-byte "
                       "aligned pointers, a scalar loop for the tail when the size is not a multiple of 4",
            severity=0.35, value=float(width), kernel=kernel.name))
    return findings


def _lg_throttled(d: Diagnostics) -> bool:
    """ncu's top stall is lg_throttle: too many small global requests in flight (what 128-bit accesses cut)."""
    return d.ncu is not None and bool(d.ncu.top_stalls) and d.ncu.top_stalls[0][0] == "lg_throttle"


def _widths(mix) -> str:
    """`LDG 9 (1×64-bit, 8×8-bit)`-style counts of the global loads and stores by width, as the SASS shows them."""
    parts = []
    for verb, widths in (("LDG", mix.global_load_widths), ("STG", mix.global_store_widths)):
        if widths:
            detail = ", ".join(f"{count}×{width * 8}-bit" for width, count in sorted(widths.items(), reverse=True))
            parts.append(f"{verb} {sum(widths.values())}: {detail}")
    return "; ".join(parts)


@tool("fusion", serves=(B.MEMORY, B.LAUNCH, B.LATENCY))
def fusion(d: Diagnostics) -> list[Finding]:
    """Several kernels (or torch ops) per call: intermediates make a round trip through DRAM."""
    if d.static is None:
        return []
    # the same kernel launched repeatedly (time steps, ping-pong buffers) is iteration, not a producer/consumer chain
    launches = min(int(d.feature("launches_per_call")), int(d.feature("kernels")))
    torch_ops = int(d.feature("torch_ops_in_forward"))
    steps = launches + torch_ops
    if steps < 2:
        return []
    moved = ""
    severity = 0.45
    value = float(steps)
    if d.ncu is not None and d.static.min_bytes:
        ratio = d.ncu.dram_bytes / d.static.min_bytes
        moved = f"; they move {ratio:.1f}x the minimum DRAM bytes ({fmt_bytes(d.ncu.dram_bytes)})"
        severity = min(0.9, 0.3 + 0.2 * max(0.0, ratio - 1.0))
        value = ratio
        if ratio < 1.3:
            return []
    parts = []
    if launches:
        parts.append(f"{launches} kernel launch{'es' if launches > 1 else ''}")
    if torch_ops:
        parts.append(f"{torch_ops} torch op{'s' if torch_ops > 1 else ''}")
    return [Finding(
        tool="fusion", category="algorithm/fusion", title="intermediates go through DRAM",
        evidence=f"{' and '.join(parts)} per call{moved}",
        suggestion="fuse the steps into one kernel that keeps the intermediate in registers or shared memory and "
                   "writes only the final output", severity=severity, value=value)]
