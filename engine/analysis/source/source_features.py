"""Structural facts about a kernel's source: synchronisation, warp intrinsics, vector types, atomics,
unrolling, grid-stride loops, shared-memory declarations and tensor-core APIs.

These are the features the CUDAPerf categories talk about (redundant or divergent barriers,
atomics contention, missing vectorisation...); SASS confirms or contradicts some of them (a
float4 in source without 128-bit loads in SASS means the compiler could not prove alignment).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.analysis.source.cuda_ast import VECTOR_TYPES, FunctionDef, Macro, Node, call_name, text, walk
from engine.analysis.source.evaluator import Env, Evaluator, Unknown
from engine.analysis.source.interp import LOOPS

SYNC_CALLS = ("__syncthreads", "__syncthreads_or", "__syncthreads_and", "__syncthreads_count")
WARP_INTRINSICS = re.compile(r"^__(shfl\w*_sync|ballot_sync|any_sync|all_sync|uni_sync|activemask|match_\w+_sync|"
                             r"reduce_\w+_sync)$")
ATOMIC = re.compile(r"^atomic[A-Z]\w*$")
TENSOR_API = re.compile(r"\bwmma::|\bmma\.sync|\bwgmma\b|\bcute::|\bmma_sync\b|\bldmatrix\b|__hmma|"
                        r"\bcublas\w*\(|\btcgen05\b")
ASYNC_COPY = re.compile(r"cp\.async|memcpy_async|__pipeline_memcpy_async|cp\.async\.bulk|\bTMA\b|cuda::barrier")
THREAD_NAMES = re.compile(r"\bthreadIdx\b|\blaneid\b|__lane_id|thread_rank\(")


@dataclass
class KernelSourceFeatures:
    """Counts and flags for one kernel; every field is a number so it can feed the ranker."""

    kernel: str
    syncthreads: int = 0
    sync_in_loop: int = 0
    sync_in_divergent_branch: int = 0  # a barrier under a thread-dependent condition: undefined behaviour
    sync_after_divergent_return: int = 0  # some threads may have returned before this barrier
    syncwarp: int = 0
    warp_intrinsics: int = 0
    shuffles: int = 0
    vector_types: int = 0
    pointer_params: int = 0
    restrict_params: int = 0
    const_pointer_params: int = 0
    ldg: int = 0
    unroll_pragmas: int = 0
    atomics: int = 0
    atomics_in_loop: int = 0
    grid_stride_loop: int = 0
    loops: int = 0
    max_loop_depth: int = 0
    shared_arrays: int = 0
    smem_bytes_source: int = 0  # static __shared__ bytes as declared (ptxas is authoritative)
    extern_shared: int = 0
    smem_padded: int = 0  # a 2-D shared array whose row length is not a multiple of 32 banks
    thread_divergent_branches: int = 0
    divergent_branches_in_loop: int = 0
    tensor_core_api: int = 0
    async_copy: int = 0
    notes: list[str] = field(default_factory=list)


def _thread_dependent_names(body: Node) -> set[str]:
    """Local names whose value depends on threadIdx (directly or through other such names)."""
    definitions: list[tuple[str, str]] = []
    for node in walk(body):
        if node.type == "init_declarator":
            target, value = node.child_by_field_name("declarator"), node.child_by_field_name("value")
            definitions.append((text(target).lstrip("*& "), text(value)))
        elif node.type == "assignment_expression" and node.child_by_field_name("left").type == "identifier":
            definitions.append((text(node.child_by_field_name("left")), text(node.child_by_field_name("right"))))
    tainted: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in definitions:
            if name in tainted:
                continue
            words = set(re.findall(r"[A-Za-z_]\w*", value))
            if THREAD_NAMES.search(value) or words & tainted:
                tainted.add(name)
                changed = True
    return tainted


def _depends_on_thread(node: Node | None, tainted: set[str]) -> bool:
    if node is None:
        return False
    source = text(node)
    return bool(THREAD_NAMES.search(source) or set(re.findall(r"[A-Za-z_]\w*", source)) & tainted)


def _ancestors(node: Node, stop: Node):
    current = node.parent
    while current is not None and current != stop:
        yield current
        current = current.parent


def _shared_bytes(declaration: Node, macros: dict[str, Macro], elem_bytes: int) -> tuple[int, list[int | None]]:
    ev = Evaluator(1, macros)
    dims: list[int | None] = []
    node = next((c for c in declaration.children_by_field_name("declarator")), None)
    while node is not None and node.type in ("array_declarator", "init_declarator"):
        size = node.child_by_field_name("size")
        try:
            dims.insert(0, None if size is None else int(ev.vector(size, Env())[0]))
        except Unknown:
            dims.insert(0, None)
        node = node.child_by_field_name("declarator")
    total = elem_bytes
    for extent in dims:
        if extent is None:
            return 0, dims
        total *= extent
    return (total if dims else elem_bytes), dims


def source_features(kernel: FunctionDef, macros: dict[str, Macro], type_bytes_of) -> KernelSourceFeatures:
    """Features of one kernel's definition; `type_bytes_of(type_name)` sizes shared-array elements."""
    features = KernelSourceFeatures(kernel=kernel.name)
    features.pointer_params = sum(p.is_pointer for p in kernel.params)
    features.restrict_params = sum(p.is_pointer and p.is_restrict for p in kernel.params)
    features.const_pointer_params = sum(p.is_pointer and p.is_const for p in kernel.params)
    features.vector_types = sum(p.type_name in VECTOR_TYPES for p in kernel.params)
    body = kernel.body
    if body is None:
        return features
    tainted = _thread_dependent_names(body)
    divergent_returns: list[int] = []
    for node in walk(body):
        kind = node.type
        loop_depth = sum(1 for a in _ancestors(node, body) if a.type in LOOPS)
        if kind == "call_expression":
            name = call_name(node)
            if name in SYNC_CALLS or (name == "sync" and "." in text(node.child_by_field_name("function"))):
                features.syncthreads += 1
                features.sync_in_loop += loop_depth > 0
                guards = [a for a in _ancestors(node, body) if a.type in ("if_statement", "conditional_expression")]
                if any(_depends_on_thread(g.child_by_field_name("condition"), tainted) for g in guards):
                    features.sync_in_divergent_branch += 1
                if any(line < node.start_byte for line in divergent_returns):
                    features.sync_after_divergent_return += 1
            elif name == "__syncwarp":
                features.syncwarp += 1
            elif WARP_INTRINSICS.match(name):
                features.warp_intrinsics += 1
                features.shuffles += name.startswith("__shfl")
            elif name.startswith("__ldg"):
                features.ldg += 1
            elif ATOMIC.match(name):
                features.atomics += 1
                features.atomics_in_loop += loop_depth > 0
        elif kind in LOOPS:
            features.loops += 1
            features.max_loop_depth = max(features.max_loop_depth, loop_depth + 1)
            update = node.child_by_field_name("update") if kind == "for_statement" else None
            strided_by = text(update) if update is not None else ""
            if kind == "while_statement":
                strided_by = text(node.child_by_field_name("body"))
            features.grid_stride_loop += "gridDim" in strided_by
        elif kind == "if_statement":
            if _depends_on_thread(node.child_by_field_name("condition"), tainted):
                features.thread_divergent_branches += 1
                features.divergent_branches_in_loop += loop_depth > 0
                consequence = node.child_by_field_name("consequence")
                if consequence is not None and any(n.type == "return_statement" for n in walk(consequence)):
                    divergent_returns.append(node.end_byte)
        elif kind in ("type_identifier", "primitive_type") and text(node) in VECTOR_TYPES:
            features.vector_types += 1
        elif kind == "preproc_call" and text(node.child_by_field_name("directive")) == "#pragma":
            if text(node.child_by_field_name("argument")).strip().startswith("unroll"):
                features.unroll_pragmas += 1
        elif kind == "declaration" and any(text(c) == "__shared__" for c in node.children):
            features.shared_arrays += 1
            type_name = text(node.child_by_field_name("type"))
            if any(text(c) == "extern" for c in node.children):
                features.extern_shared += 1
                continue
            size, dims = _shared_bytes(node, macros, type_bytes_of(type_name))
            features.smem_bytes_source += size
            elem = type_bytes_of(type_name)
            if len(dims) >= 2 and dims[-1] is not None and (dims[-1] * elem // 4) % 32 != 0:
                features.smem_padded = 1
    body_text = text(body)
    features.tensor_core_api = len(TENSOR_API.findall(body_text))
    features.async_copy = len(ASYNC_COPY.findall(body_text))
    return features
