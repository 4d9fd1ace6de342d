"""The typed record of everything static known about one candidate, and its flat feature vector.

`StaticReport.features` is what the pairwise ranker trains on and what the structural reward
reads, so its keys are fixed here (`FEATURES`) with a line each on what they mean; every report
carries every key (0 where not applicable or not known, with a `*_known` flag where it matters).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from engine.analysis.binary.occupancy import REPORTED_ARCHS, Occupancy
from engine.analysis.binary.ptxas import KernelResources
from engine.analysis.binary.sass import InstructionMix
from engine.analysis.source.access import AccessEstimate
from engine.analysis.source.control import BranchEstimate, LoopEstimate
from engine.analysis.source.launch import LaunchConfig
from engine.analysis.source.source_features import KernelSourceFeatures
from engine.schema.policy import read_record

FEATURES: dict[str, str] = {
    "kernels": "CUDA kernels defined",
    "launches_per_call": "kernel launch sites per forward/entry call",
    "torch_ops_in_forward": "torch compute ops called in ModelNew.forward besides the candidate's kernels",
    "registers": "registers per thread (max over kernels, ptxas)",
    "spill_bytes": "spill stores + loads in bytes (sum over kernels, ptxas)",
    "stack_bytes": "stack frame bytes (max)",
    "smem_bytes": "static shared memory per block in bytes (max, ptxas)",
    "dynamic_smem_bytes": "dynamic shared memory per block at the launch (max)",
    "barriers": "named barriers used (max, ptxas)",
    "block_threads": "threads per block of the kernel with the lowest occupancy",
    "grid_blocks": "blocks in the grid (0 = not known statically)",
    "launch_known": "1 if every block size came from the candidate rather than an assumption",
    "occupancy": "theoretical occupancy on the target arch (min over kernels, 0..1)",
    "occupancy_sm80": "theoretical occupancy on sm_80 with the target build's registers",
    "occupancy_sm86": "theoretical occupancy on sm_86",
    "occupancy_sm89": "theoretical occupancy on sm_89",
    "occupancy_sm90": "theoretical occupancy on sm_90",
    "occupancy_limited_by_registers": "1 if registers bind the target-arch occupancy below 100 %",
    "occupancy_limited_by_smem": "1 if shared memory binds it",
    "occupancy_limited_by_blocks": "1 if the per-SM block cap binds it (small blocks)",
    "occupancy_limited_by_warps": "1 if the warp slots bind it below 100 % (block-size granularity)",
    "sass_instructions": "static SASS instructions (sum)",
    "global_loads": "global load instructions (SASS)",
    "global_stores": "global store instructions (SASS)",
    "shared_loads": "shared load instructions (SASS)",
    "shared_stores": "shared store instructions (SASS)",
    "local_memory_ops": "LDL/STL instructions (spills or local arrays)",
    "vector_width": "widest global access in bytes per thread (SASS: 4, 8 or 16)",
    "global_128bit_fraction": "share of global memory instructions that are 128-bit",
    "barrier_instructions": "BAR instructions (SASS)",
    "shuffle_instructions": "SHFL instructions (SASS)",
    "tensor_instructions": "HMMA/IMMA/HGMMA/... instructions (SASS)",
    "uses_tensor_cores": "1 if the SASS has tensor-core MMA instructions",
    "uses_wgmma": "1 if the SASS has warpgroup MMA (HGMMA and kin)",
    "ffma": "FFMA instructions",
    "fmul": "FMUL instructions",
    "fadd": "FADD instructions",
    "fp64_instructions": "DFMA/DMUL/DADD instructions",
    "mufu": "MUFU (special function) instructions",
    "atomic_instructions": "ATOM/RED instructions",
    "predicated_branches": "predicated BRA instructions",
    "in_loop_fraction": "share of classified SASS instructions inside loops",
    "coalescing_known": "1 if at least one global access could be estimated",
    "coalescing_sectors_per_request": "loop-weighted mean 32-byte sectors per warp request over global accesses",
    "coalescing_efficiency": "ideal / estimated sectors, loop-weighted (1 = perfectly coalesced)",
    "global_load_sectors_per_request": "as coalescing_sectors_per_request, loads only",
    "global_store_sectors_per_request": "as coalescing_sectors_per_request, stores only",
    "worst_sectors_excess": "largest sectors/ideal over global accesses",
    "uncoalesced_accesses": "global accesses using more than twice the ideal sectors",
    "unknown_accesses": "global/shared accesses whose addresses are not known statically",
    "smem_bank_conflict_ways": "largest wavefronts/ideal over shared accesses (1 = conflict-free)",
    "smem_padded": "1 if a 2-D shared array is padded off a multiple of 32 banks",
    "shared_arrays": "__shared__ declarations",
    "extern_shared": "extern __shared__ (dynamic) declarations",
    "syncthreads": "__syncthreads() calls in source",
    "sync_in_loop": "__syncthreads() calls inside loops",
    "sync_in_divergent_branch": "__syncthreads() under a thread-dependent condition",
    "sync_after_divergent_return": "__syncthreads() after a thread-dependent early return",
    "syncwarp": "__syncwarp() calls",
    "warp_intrinsics": "__shfl/__ballot/__any/... calls",
    "vector_types": "float4/int4/half2/... mentions in kernels",
    "restrict_fraction": "share of pointer parameters declared __restrict__",
    "const_fraction": "share of pointer parameters declared const",
    "uses_ldg": "1 if __ldg() is called",
    "unroll_pragmas": "#pragma unroll directives",
    "atomics": "atomic*() calls in source",
    "atomics_in_loop": "atomic*() calls inside loops",
    "grid_stride_loop": "1 if a loop strides by gridDim",
    "loops": "loops in kernels",
    "max_loop_depth": "deepest loop nest",
    "thread_divergent_branches": "if statements whose condition depends on threadIdx",
    "divergent_branches_in_loop": "such branches inside loops",
    "tensor_core_api": "1 if the source uses wmma/mma.sync/wgmma/cute",
    "async_copy": "1 if the source uses cp.async/memcpy_async",
    "arithmetic_intensity": "analytical FLOPs / minimum DRAM bytes of the problem at the configuration",
}


@dataclass
class KernelReport:
    """One kernel: what ptxas allocated, what SASS it became, how it is launched, what its source does."""

    name: str
    symbol: str
    launch: LaunchConfig
    resources: KernelResources | None = None
    mix: InstructionMix | None = None
    occupancy: dict[str, Occupancy] = field(default_factory=dict)
    source: KernelSourceFeatures | None = None
    accesses: list[AccessEstimate] = field(default_factory=list)
    assumed_scalars: list[str] = field(default_factory=list)
    branches: list[BranchEstimate] = field(default_factory=list)  # ifs that split warps
    loops: list[LoopEstimate] = field(default_factory=list)

    def global_accesses(self, kind: str | None = None) -> list[AccessEstimate]:
        return [a for a in self.accesses if a.space == "global" and a.sectors is not None
                and (kind is None or a.kind == kind or (kind == "store" and a.kind == "atomic"))]

    def sectors_per_request(self, kind: str | None = None) -> float | None:
        """Loop-weighted mean sectors per request: the static counterpart of ncu's per-kernel ratio."""
        accesses = self.global_accesses(kind)
        weight = sum(a.weight for a in accesses)
        return sum(a.weight * a.sectors for a in accesses) / weight if weight else None

    def worst_access(self) -> AccessEstimate | None:
        known = self.global_accesses()
        return max(known, key=lambda a: (a.excess, a.weight)) if known else None

    def worst_shared_access(self) -> AccessEstimate | None:
        known = [a for a in self.accesses if a.space == "shared" and a.wavefronts is not None]
        return max(known, key=lambda a: (a.excess, a.weight)) if known else None


@dataclass
class StaticReport:
    """Everything learned about a candidate without running it."""

    ok: bool  # compiled (CUDA) and analysed
    language: str
    arch: str
    kernels: list[KernelReport]
    features: dict[str, float]
    notes: list[str] = field(default_factory=list)
    compile_log: str = ""
    seconds: float = 0.0  # wall time of the whole analysis
    compile_seconds: float = 0.0  # of which nvcc (0 for a cached build)
    config: str | None = None
    flops: float | None = None
    min_bytes: float | None = None
    launches_per_call: int = 0

    @property
    def arithmetic_intensity(self) -> float | None:
        return self.flops / self.min_bytes if self.flops and self.min_bytes else None

    def kernel(self, name: str) -> KernelReport:
        for kernel in self.kernels:
            if name in (kernel.name, kernel.symbol):
                return kernel
        raise KeyError(name)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> StaticReport:
        """The report as stored in a `static` diagnostic, under `engine.schema.policy` (rows from before a field
        existed read with its default; newer keys are ignored; a wrong value raises)."""
        return read_record(cls, data)


def _weighted(accesses: list[AccessEstimate], value) -> float | None:
    weight = sum(a.weight for a in accesses)
    return sum(a.weight * value(a) for a in accesses) / weight if weight else None


def build_features(kernels: list[KernelReport], target_arch: str, launches_per_call: int = 0,
                   torch_ops: int = 0, arithmetic_intensity: float | None = None) -> dict[str, float]:
    """The flat vector: worst-case over kernels for costs, sums for counts."""
    f = dict.fromkeys(FEATURES, 0.0)
    f["kernels"] = len(kernels)
    f["launches_per_call"] = launches_per_call
    f["torch_ops_in_forward"] = torch_ops
    f["arithmetic_intensity"] = arithmetic_intensity or 0.0
    f["launch_known"] = float(bool(kernels) and all(k.launch.origin != "assumed" for k in kernels))
    target = target_arch.rstrip("a")
    with_occupancy = [k for k in kernels if target in k.occupancy]
    if with_occupancy:
        worst = min(with_occupancy, key=lambda k: k.occupancy[target].occupancy)
        occ = worst.occupancy[target]
        f["occupancy"] = occ.occupancy
        f["block_threads"] = worst.launch.threads
        if occ.occupancy < 1.0:
            key = {"registers": "occupancy_limited_by_registers", "shared_mem": "occupancy_limited_by_smem",
                   "blocks": "occupancy_limited_by_blocks", "warps": "occupancy_limited_by_warps"}.get(occ.limiter)
            if key:
                f[key] = 1.0
        for arch in REPORTED_ARCHS:
            values = [k.occupancy[arch].occupancy for k in with_occupancy if arch in k.occupancy]
            f[f"occupancy_{arch.replace('_', '')}"] = min(values) if values else 0.0
    elif kernels:
        f["block_threads"] = kernels[0].launch.threads
    grids = [k.launch.blocks for k in kernels if k.launch.blocks]
    f["grid_blocks"] = float(min(grids)) if grids and len(grids) == len(kernels) else 0.0
    for k in kernels:
        if k.resources is not None:
            r = k.resources
            f["registers"] = max(f["registers"], r.registers)
            f["spill_bytes"] += r.spill_bytes
            f["stack_bytes"] = max(f["stack_bytes"], r.stack_bytes)
            f["smem_bytes"] = max(f["smem_bytes"], r.smem_bytes)
            f["barriers"] = max(f["barriers"], r.barriers)
        f["dynamic_smem_bytes"] = max(f["dynamic_smem_bytes"], k.launch.dynamic_smem)
    _sass_features(f, [k.mix for k in kernels if k.mix is not None])
    _access_features(f, kernels)
    _source_feature_totals(f, [k.source for k in kernels if k.source is not None])
    return f


def _sass_features(f: dict[str, float], mixes: list[InstructionMix]) -> None:
    classified = in_loop = 0
    memory = wide = 0
    for mix in mixes:
        f["sass_instructions"] += mix.total
        for key, name in (("global_loads", "global_load"), ("global_stores", "global_store"),
                          ("shared_loads", "shared_load"), ("shared_stores", "shared_store"),
                          ("local_memory_ops", "local_memory"), ("barrier_instructions", "barrier"),
                          ("shuffle_instructions", "shuffle"), ("tensor_instructions", "tensor"), ("ffma", "ffma"),
                          ("fmul", "fmul"), ("fadd", "fadd"), ("fp64_instructions", "fp64"), ("mufu", "mufu"),
                          ("atomic_instructions", "atomic"), ("predicated_branches", "predicated_branch")):
            f[key] += mix.count(name)
        f["vector_width"] = max(f["vector_width"], mix.max_global_width)
        classified += sum(mix.counts.values())
        in_loop += sum(mix.in_loop.values())
        memory += sum(mix.global_load_widths.values()) + sum(mix.global_store_widths.values())
        wide += mix.global_load_widths.get(16, 0) + mix.global_store_widths.get(16, 0)
    f["uses_tensor_cores"] = float(f["tensor_instructions"] > 0)
    f["uses_wgmma"] = float(any(m.uses_wgmma for m in mixes))
    f["in_loop_fraction"] = in_loop / classified if classified else 0.0
    f["global_128bit_fraction"] = wide / memory if memory else 0.0


def _access_features(f: dict[str, float], kernels: list[KernelReport]) -> None:
    accesses = [a for k in kernels for a in k.accesses]
    known = [a for a in accesses if a.space == "global" and a.sectors is not None]
    f["unknown_accesses"] = sum(1 for a in accesses if not a.known)
    if known:
        f["coalescing_known"] = 1.0
        f["coalescing_sectors_per_request"] = _weighted(known, lambda a: a.sectors) or 0.0
        ideal = sum(a.weight * a.ideal_sectors for a in known)
        actual = sum(a.weight * a.sectors for a in known)
        f["coalescing_efficiency"] = ideal / actual if actual else 0.0
        for key, kind in (("global_load_sectors_per_request", "load"), ("global_store_sectors_per_request", "store")):
            subset = [a for a in known if a.kind == kind or (kind == "store" and a.kind == "atomic")]
            f[key] = _weighted(subset, lambda a: a.sectors) or 0.0
        f["worst_sectors_excess"] = max(a.excess for a in known)
        f["uncoalesced_accesses"] = sum(1 for a in known if a.excess > 2.0)
    shared = [a for a in accesses if a.space == "shared" and a.wavefronts is not None]
    f["smem_bank_conflict_ways"] = max((a.excess for a in shared), default=0.0)


def _source_feature_totals(f: dict[str, float], sources: list[KernelSourceFeatures]) -> None:
    pointers = sum(s.pointer_params for s in sources)
    f["restrict_fraction"] = sum(s.restrict_params for s in sources) / pointers if pointers else 0.0
    f["const_fraction"] = sum(s.const_pointer_params for s in sources) / pointers if pointers else 0.0
    for s in sources:
        for key in ("shared_arrays", "extern_shared", "syncthreads", "sync_in_loop", "sync_in_divergent_branch",
                    "sync_after_divergent_return", "syncwarp", "warp_intrinsics", "vector_types", "unroll_pragmas",
                    "atomics", "atomics_in_loop", "loops", "thread_divergent_branches",
                    "divergent_branches_in_loop"):
            f[key] += getattr(s, key)
        f["max_loop_depth"] = max(f["max_loop_depth"], s.max_loop_depth)
        f["smem_padded"] = max(f["smem_padded"], s.smem_padded)
        f["uses_ldg"] = max(f["uses_ldg"], float(s.ldg > 0))
        f["grid_stride_loop"] = max(f["grid_stride_loop"], float(s.grid_stride_loop > 0))
        f["tensor_core_api"] = max(f["tensor_core_api"], float(s.tensor_core_api > 0))
        f["async_copy"] = max(f["async_copy"], float(s.async_copy > 0))
