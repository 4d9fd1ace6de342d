"""Synthetic runs for the dashboard's tests and its latency benchmark.

Writes rows the way the contract with the run process says a round is stored: candidate,
evaluation, diagnostics, a RunEvent row, and only then the event file. Never used by the app.
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime
from pathlib import Path

from db.models import Candidate, Diagnostic, Evaluation, Run, RunEvent
from db.session import insert_many, next_id, session_scope
from engine.analysis import (
    Bottleneck,
    Classification,
    InstructionMix,
    KernelAgreement,
    KernelReport,
    KernelResources,
    LaunchConfig,
    NcuRecord,
    NcuSummary,
    Occupancy,
    RooflinePoint,
    RooflineRecord,
    StaticReport,
)
from engine.feedback.model import FeedbackRecord, Finding
from engine.settings import get_settings
from engine.verify.judge.energy_meter import EnergyComparison, EnergyMeasurement, EnergyRecord


def other_code(n: int) -> str:
    """A transpose kernel that differs in code (not only comments) for each `n`."""
    return SOURCE.replace("#define TILE 32", f"#define TILE {n}") % n


SOURCE = """#define TILE 32
__global__ void kernel_transpose(int rows, int cols, const float* in, float* out) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols) out[c * rows + r] = in[r * cols + c];  // step %d
}
"""


def make_run(problem_slug: str = "transpose", status: str = "running", rounds: int = 10, recorded: bool = False,
             device: str | None = "cpu", strategy: str = "iterative", proposer: str = "library") -> int:
    home = get_settings().runs_dir
    with session_scope() as session:
        run = Run(problem_slug=problem_slug, proposer=proposer, strategy=strategy, rounds_budget=rounds,
                  status=status, device=device, recorded=recorded, config={"seed": 0})
        session.add(run)
        session.flush()
        run.folder = str(home / str(run.id))
        run_id = run.id
    Path(home / str(run_id) / "events").mkdir(parents=True, exist_ok=True)
    return run_id


def write_event_file(run_id: int, seq: int, kind: str, step: int | None, candidate_id: int | None,
                     message: str = "") -> Path:
    """Atomically, as a careful writer would: a temp name, then a rename into place."""
    folder = get_settings().runs_dir / str(run_id) / "events"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{seq:08d}.json"
    tmp = folder / f".{seq:08d}.json.tmp"
    tmp.write_text(json.dumps({"kind": kind, "step": step, "candidate_id": candidate_id, "message": message,
                               "time": datetime.now(UTC).isoformat()}))
    os.replace(tmp, target)
    return target


def timed_stats(median_us: float) -> dict:
    """One side's times as the verifier stores them (`TimingStats`), for a seeded evaluation."""
    return {"median_us": median_us, "iqr_us": median_us / 100, "mean_us": median_us, "min_us": median_us * 0.99,
            "trials": 100, "clock": "cuda-events"}


def add_round(run_id: int, step: int, parent_id: int | None = None, verdict: str = "correct",
              speedup: float | None = 1.5, sample: int = 0, event_file: bool = True,
              diagnostics: bool = True, seq: int | None = None, ncu_refused: str | None = None,
              source: str | None = None) -> int:
    """Store one evaluated candidate of `run_id` and announce it; returns the candidate id. Without
    `source`, every round has the same code but for a comment (one code to `db.identity`)."""
    source = source or SOURCE % step
    timed = verdict == "correct" and speedup is not None
    candidate_us = 100.0 / speedup if timed else None
    configs = [
        {"name": "small", "hidden": False, "ok": verdict == "correct", "max_abs_error": 0.0, "max_rel_error": 0.0,
         "first_mismatch": None if verdict == "correct" else "output 0 at [3, 1]: got 0.5, expected 0.25",
         "candidate": timed_stats(candidate_us / 50) if timed else None, "baselines": {"naive": timed_stats(2.0)}},
        {"name": "large", "hidden": False, "ok": verdict == "correct", "max_abs_error": 0.0, "max_rel_error": 0.0,
         "candidate": timed_stats(candidate_us) if timed else None, "baselines": {"naive": timed_stats(100.0)}},
        {"name": "odd-shape", "hidden": True, "ok": verdict == "correct", "max_abs_error": 0.0,
         "max_rel_error": 0.0, "candidate": None, "baselines": {}},
    ]
    with session_scope() as session:
        depth = 0
        if parent_id is not None:
            parent = session.get(Candidate, parent_id)
            depth = (parent.depth + 1) if parent else 0
        cand = Candidate(run_id=run_id, problem_slug="transpose", parent_id=parent_id, step=step, sample=sample,
                         depth=depth, origin="library", strategy="shared-tiling", language="cuda", source=source,
                         source_hash=hashlib.sha256(source.encode()).hexdigest()[:16],
                         proposal={"implementation": "shared-tiling", "tunables": {"TILE_DIM": 32}})
        session.add(cand)
        session.flush()
        session.add(Evaluation(
            candidate_id=cand.id, verdict=verdict, message="" if verdict == "correct" else f"{verdict} on small",
            log="nvcc -O3 … ok\nsmall: ok\nlarge: ok" if verdict == "correct" else "output 0 at [3, 1] differs",
            configs=configs, candidate_us=candidate_us, baseline_us=100.0 if timed else None,
            speedup=speedup if timed else None, device="NVIDIA H200", timing={"trials": 100}))
        if diagnostics:
            session.add(Diagnostic(candidate_id=cand.id, kind="static", data=_static().to_json()))
            if timed:
                session.add(Diagnostic(candidate_id=cand.id, kind="ncu", data=_ncu(step, ncu_refused).to_json()))
                session.add(Diagnostic(candidate_id=cand.id, kind="energy", data=_energy(speedup).to_json()))
                session.add(Diagnostic(candidate_id=cand.id, kind="roofline", bottleneck="memory-bound",
                                       data=_roofline(speedup).to_json()))
            finding = Finding("coalescing", "memory/uncoalesced-access", "uncoalesced global stores",
                              "32 sectors per request", "stage a tile", 0.8)
            session.add(Diagnostic(candidate_id=cand.id, kind="feedback", bottleneck="memory-bound",
                                   text=f"1. Writes are strided (step {step}): stage a tile in shared memory.",
                                   data=FeedbackRecord(["coalescing"], [finding]).to_json()))
        event = RunEvent(run_id=run_id, kind="round", step=step, candidate_id=cand.id, message=f"round {step}")
        session.add(event)
        session.flush()
        candidate_id, event_id = cand.id, event.id
    if event_file:
        write_event_file(run_id, seq if seq is not None else event_id, "round", step, candidate_id)
    return candidate_id


def _static() -> StaticReport:
    name = "kernel_transpose"
    kernel = KernelReport(name, name, LaunchConfig(name, (32, 8, 1), origin="launch-site"),
                          KernelResources(name, "sm_90", 16, smem_bytes=4224),
                          InstructionMix(name, 40, {"global_load": 4, "global_store": 4, "shared_load": 4}),
                          {"sm_90": Occupancy("sm_90", 256, 8, 64, 64, ("warps",))})
    return StaticReport(True, "cuda", "sm_90", [kernel], {"uses_shared_memory": 1, "loop_count": 2, "global_loads": 1})


def _ncu(step: int, refused: str | None) -> NcuRecord:
    if refused:
        return NcuRecord(ok=False, seconds=0.4, config="large", reason=refused)
    summary = NcuSummary(kernels=1, duration_s=9.8e-5, dram_bytes_read=1.34e8, dram_bytes_written=1.15e8, flops={},
                         achieved_occupancy=0.7, theoretical_occupancy=1.0, ld_sectors_per_request=4.0,
                         st_sectors_per_request=32.0 - step, shared_ld_wavefronts_per_request=None,
                         shared_st_wavefronts_per_request=None, shared_bank_conflicts=0.0,
                         top_stalls=[("long_scoreboard", 38.2)], tensor_pipe_pct=None, sm_throughput_pct=None,
                         dram_throughput_pct=None, grid_blocks=None, block_threads=256)
    compared = KernelAgreement("kernel_transpose", static_ld=4.0, ncu_ld=4.0, static_st=32.0, ncu_st=32.0 - step,
                               static_occupancy=1.0, ncu_theoretical_occupancy=1.0, ncu_achieved_occupancy=0.7)
    return NcuRecord(ok=True, seconds=6.1, config="large", summary=summary, static_vs_ncu=[compared])


def _energy(speedup: float) -> EnergyRecord:
    candidate = EnergyMeasurement(joules_per_call=0.05 / speedup, seconds_per_call=1 / 9000, calls=9000, seconds=1.0,
                                  joules=450.0, average_watts=450.0, idle_watts=80.0)
    baseline = EnergyMeasurement(joules_per_call=0.05, seconds_per_call=1e-4, calls=10_000, seconds=1.0, joules=500.0,
                                 average_watts=500.0, idle_watts=80.0)
    comparison = EnergyComparison(candidate.joules_per_call, 0.05, 1 / speedup, 0.045, 0.9)
    return EnergyRecord("NVIDIA H200", 1.0, candidate, "the candidate's process", "eager", baseline, comparison)


def _roofline(speedup: float) -> RooflineRecord:
    bandwidth = 1e12 * speedup
    point = RooflinePoint(arithmetic_intensity=0.25, achieved_flops=bandwidth / 4, achieved_bandwidth=bandwidth,
                          precision="fp32", peak_flops=6.69e13, peak_bandwidth=4.8e12, bound="memory", roof=1.2e12,
                          pct_of_roof=bandwidth / 4.8e12, source="analytical", seconds=1e-4)
    return RooflineRecord(point, Classification(Bottleneck.MEMORY, "at the memory roof"), "NVIDIA H200",
                          config="large")


def remeasure(candidate_id: int, *speedups: float) -> None:
    """Evaluate a stored candidate again, once per speedup, as a re-measure does (same device, same context)."""
    with session_scope() as session:
        for speedup in speedups:
            session.add(Evaluation(candidate_id=candidate_id, verdict="correct", candidate_us=100.0 / speedup,
                                   baseline_us=100.0, speedup=speedup, device="NVIDIA H200",
                                   timing={"trials": 100}))


def seed_run(rounds: int = 5, **run_kwargs) -> tuple[int, list[int]]:
    """A run with a chain of rounds, alternating a failure in, as an iterative search makes."""
    run_id = make_run(**run_kwargs)
    ids: list[int] = []
    for step in range(rounds):
        verdict = "incorrect" if step % 3 == 2 else "correct"
        ids.append(add_round(run_id, step, parent_id=ids[-1] if ids else None, verdict=verdict,
                             speedup=1.0 + 0.4 * step))
    return run_id, ids


def set_status(run_id: int, status: str) -> None:
    with session_scope() as session:
        run = session.get(Run, run_id)
        run.status = status


MAIN = Path(__file__).resolve().parent / "main.py"


def clear_streamlit_caches() -> None:
    """AppTest runs in the test's process, where Streamlit's caches outlive one test."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def app_at(page: str | None = None, query: dict[str, str] | None = None, timeout_s: float = 60):
    """An AppTest of the whole app (router included), run once and switched to `page` if given."""
    from streamlit.testing.v1 import AppTest

    clear_streamlit_caches()
    at = AppTest.from_file(str(MAIN), default_timeout=timeout_s)
    at.session_state["gpu_notice_shown"] = True
    for key, value in (query or {}).items():
        at.query_params[key] = value
    at.run()
    if page is not None:
        at.switch_page(page).run()
    return at


def bulk_run(candidates: int, per_step: int = 10) -> int:
    """A big run inserted in bulk: `candidates` evaluated candidates, `per_step` children per round."""
    run_id = make_run(rounds=max(1, candidates // per_step))
    now = datetime.now(UTC)
    with session_scope() as session:
        first = next_id(session, Candidate)
        cand_rows, eval_rows = [], []
        for i in range(candidates):
            step, sample = divmod(i, per_step)
            ok = i % 7 != 3
            cand_rows.append({
                "id": first + i, "run_id": run_id, "problem_slug": "transpose", "step": step, "sample": sample,
                "parent_id": first + (step - 1) * per_step if step else None, "depth": step, "origin": "library",
                "strategy": "coalesced", "language": "cuda", "source": SOURCE % i, "source_hash": f"h{i}",
                "proposal": {}, "created_at": now})
            eval_rows.append({
                "candidate_id": first + i, "verdict": "correct" if ok else "incorrect", "message": "",
                "speedup": 1 + (i % 50) / 10 if ok else None, "candidate_us": 10.0, "baseline_us": 20.0,
                "configs": [{"name": "large", "hidden": False, "ok": ok, "candidate": timed_stats(10.0)}],
                "integrity": [], "timing": {}, "reward_components": {}, "flagged": False, "recorded": False,
                "created_at": now})
        insert_many(session, Candidate, cand_rows)
        insert_many(session, Evaluation, eval_rows)
        session.add(RunEvent(run_id=run_id, kind="round", step=(candidates - 1) // per_step, message="bulk"))
    return run_id


# --- a real server, for the browser test and the latency benchmark -------------------------------

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def healthy(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
            return reply.read().decode().strip() == "ok"
    except OSError:
        return False


def start_streamlit(home: Path, extra_env: dict[str, str] | None = None, log: Path | None = None,
                    timeout_s: float = 60):
    """`streamlit run app/main.py` on a free loopback port with REFINERY_HOME=`home`; (process, url)."""
    import subprocess
    import sys
    import time

    port = free_port()
    env = {**os.environ, **(extra_env or {}), "REFINERY_HOME": str(home)}
    env.pop("REFINERY_DATABASE_URL", None)
    out = open(log or os.devnull, "w")  # noqa: SIM115 - handed to the child
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app/main.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
         "--browser.gatherUsageStats", "false"],
        cwd=MAIN.parents[1], env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    out.close()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    while not healthy(url):
        if server.poll() is not None or time.monotonic() > deadline:
            stop_streamlit(server)
            tail = log.read_text()[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"streamlit did not start on {url}. {tail}")
        time.sleep(0.3)
    return server, url


def stop_streamlit(server) -> None:
    import subprocess

    server.terminate()
    try:
        server.wait(timeout=15)
    except subprocess.TimeoutExpired:
        server.kill()
