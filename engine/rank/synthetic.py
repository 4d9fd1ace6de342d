"""Generated candidate sets with a known speed model, for tests, the training benchmark and demos.

Each candidate gets structural features (registers, occupancy, coalescing, vector width, spills,
shared memory, tensor cores, sync in loop, unroll), a CUDA-like source that shows them (float4
loads, `__shared__` tiles, `__syncthreads()` in the loop, `wmma`), and a time drawn from a fixed
log-linear model with interactions and noise. Problems scale the effects differently, so a model
must generalise across problems, as held-out evaluation demands. Nothing here is a real
measurement: the data only exercises the machinery.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from db.labels import CandidateEvidence, Measurement
from engine.schema.evaluation import EvaluationTiming, TimingStats

DEVICE = "synthetic-gpu"


@dataclass(frozen=True)
class SyntheticConfig:
    problems: int = 6
    candidates_per_problem: int = 12
    noise: float = 0.05  # std of log time
    incorrect_share: float = 0.1
    integrity_share: float = 0.0
    missing_share: float = 0.1  # candidates whose static analysis lacks "occupancy"
    no_static_share: float = 0.0  # candidates with no static diagnostic at all
    seed: int = 0
    prefix: str = "synth"


def _features(rng: np.random.Generator) -> dict[str, float]:
    vector_width = int(rng.choice([1, 2, 4]))
    smem = int(rng.choice([0, 4096, 16384, 49152]))
    registers = int(rng.integers(16, 129))
    occupancy = min(1.0, 64.0 / registers) * (0.5 if smem > 32768 else 1.0)
    return {"registers": registers, "spills": int(rng.choice([0, 0, 0, 0, 16, 48])), "smem_bytes": smem,
            "occupancy": round(occupancy, 3), "coalescing_sectors_per_request": int(rng.choice([4, 8, 16, 32])),
            "vector_width": vector_width, "sync_in_loop": int(rng.random() < 0.3),
            "uses_tensor_cores": int(rng.random() < 0.2), "unroll": int(rng.choice([1, 2, 4, 8]))}


def log_time(f: dict[str, float], scale: float) -> float:
    """The hidden speed model (log of time relative to the problem's baseline)."""
    staged = f["smem_bytes"] > 0
    effect = (-0.35 * math.log2(f["vector_width"]) + 0.30 * math.log2(f["coalescing_sectors_per_request"] / 4)
              - 0.8 * f["occupancy"] + 0.5 * (f["spills"] > 0) + 0.25 * f["sync_in_loop"]
              + (-0.6 if staged else 0.2) * f["uses_tensor_cores"] - 0.2 * staged - 0.1 * math.log2(f["unroll"]))
    return scale * effect


def _source(f: dict[str, float], name: str, rng: np.random.Generator) -> str:
    lines = [f"__global__ void __launch_bounds__(256) {name}(const float* __restrict__ x, float* y, int n) {{"]
    if f["smem_bytes"]:
        lines.append(f"    __shared__ float tile[{int(f['smem_bytes']) // 4}];")
    lines.append("    int i = blockIdx.x * blockDim.x + threadIdx.x;")
    if f["vector_width"] == 4:
        lines.append("    float4 v = reinterpret_cast<const float4*>(x)[i];")
    elif f["vector_width"] == 2:
        lines.append("    float2 v = reinterpret_cast<const float2*>(x)[i];")
    else:
        lines.append("    float v = x[i];")
    lines += ["    #pragma unroll"] * int(math.log2(f["unroll"]))
    lines.append(f"    for (int k = 0; k < {int(rng.integers(4, 64))}; ++k) {{")
    lines.append("        acc = fmaf(acc, w[k], b[k]);")
    if f["sync_in_loop"]:
        lines.append("        __syncthreads();")
    lines.append("    }")
    if f["uses_tensor_cores"]:
        lines.append("    wmma::mma_sync(c_frag, a_frag, b_frag, c_frag);")
    stride = int(f["coalescing_sectors_per_request"]) // 4
    lines.append(f"    y[i * {stride}] = acc;" if stride > 1 else "    y[i] = acc;")
    lines.append("}")
    return "\n".join(lines)


def synthetic_evidence(config: SyntheticConfig | None = None) -> list[CandidateEvidence]:
    """Candidates as evidence records with ids 1..N (not in any database)."""
    config = config or SyntheticConfig()
    rng = np.random.default_rng(config.seed)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    out: list[CandidateEvidence] = []
    for p in range(config.problems):
        slug = f"{config.prefix}-{p:03d}"
        scale = float(rng.uniform(0.7, 1.3))
        base_us = float(rng.uniform(20, 500))
        for k in range(config.candidates_per_problem):
            f = _features(rng)
            lt = log_time(f, scale) + float(rng.normal(0, config.noise))
            roll = rng.random()
            verdict = ("integrity_violation" if roll < config.integrity_share
                       else "incorrect" if roll < config.integrity_share + config.incorrect_share else "correct")
            source = _source(f, f"kernel_{p}_{k}", rng)
            if verdict == "integrity_violation":  # the usual trick: real work hidden on a side stream
                source += "\ncudaStream_t side; cudaStreamCreate(&side); launch_on(side);"
            features = dict(f)
            if rng.random() < config.missing_share:
                features.pop("occupancy")
            if rng.random() < config.no_static_share:
                features = {}
            us = base_us * math.exp(lt)
            if verdict == "integrity_violation":
                us = base_us / 50.0  # the cheat's "speed" is what makes it tempting
            timed = verdict in ("correct", "integrity_violation")
            measurements = ((Measurement(DEVICE, us, base_us / us, baseline="eager", config="large",
                                         baseline_us=base_us, iqr_us=us * 0.01, trials=100),)
                            if verdict == "correct" else ())
            out.append(CandidateEvidence(
                id=len(out) + 1, problem_slug=slug, language="cuda", origin="library", strategy=None, source=source,
                source_hash=hashlib.sha256(source.encode()).hexdigest(),
                created_at=start + timedelta(minutes=len(out)), verdict=verdict,
                speedup=base_us / us if timed else None, candidate_us=us if timed else None,
                device=DEVICE, integrity_violation=verdict == "integrity_violation", features=features,
                measurements=measurements))
    return out


def _stored_timing(item: CandidateEvidence) -> dict:
    """The timing blob the verifier would store for the generated measurement (no trials kept)."""
    if not item.measurements:
        return {}
    m = item.measurements[0]
    stats = TimingStats(median_us=m.candidate_us, iqr_us=m.iqr_us, mean_us=m.candidate_us, min_us=m.candidate_us,
                        trials=m.trials)
    return EvaluationTiming(timed_config=m.config, baseline_name=m.baseline, candidate=stats).stored()


def write_synthetic(config: SyntheticConfig | None = None) -> list[int]:
    """Write generated candidates with their evaluation and static diagnostic; return the new ids."""
    from db.models import Candidate, Diagnostic, Evaluation
    from db.session import session_scope

    ids = []
    with session_scope() as session:
        for item in synthetic_evidence(config):
            candidate = Candidate(problem_slug=item.problem_slug, origin=item.origin, language=item.language,
                                  source=item.source, source_hash=item.source_hash, strategy=item.strategy)
            session.add(candidate)
            session.flush()
            ids.append(candidate.id)
            session.add(Evaluation(candidate_id=candidate.id, verdict=item.verdict or "correct", device=item.device,
                                   candidate_us=item.candidate_us, speedup=item.speedup,
                                   baseline_us=(item.candidate_us or 0) * (item.speedup or 0) or None,
                                   timing=_stored_timing(item)))
            if item.features:
                session.add(Diagnostic(candidate_id=candidate.id, kind="static", data={"features": item.features}))
    return ids
