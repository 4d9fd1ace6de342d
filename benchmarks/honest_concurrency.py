"""Honest kernels verified at full concurrency: how many the verifier rejects while builds fill every core.

Every candidate here is known to be honest, so every verdict other than `correct` is a false reject. The set
depends on what the verifier's pool runs on:
- on a GPU: the honest fixtures of `tests/test_verify_honest_gpu.py` (two streams, a CUDA graph, a torch
  epilogue, Triton, CuPy, load_inline, a library call for part of the work, the fp32 summation orders of
  `tests/honest/gpu_orders/`), the fixture C problem's CUDA port, and every shipped CUDA implementation of the
  problem library;
- on a CPU: the pure-PyTorch fixtures (`tests/cheats/honest.py`, the serial and tree fp32 orders of
  `tests/honest/arithmetic/`), the fixture C problem's C code, and every shipped CPU implementation.
Left out on purpose: `half_accumulate.py`, `tf32_inputs.py` and `cheats/half_accumulate_cuda.py` (reduced
precision, rejected by design), `split_k.py` (it calls the reference's own matmul, which the `torch-op` check
rejects; its test runs with the runtime checks off), and pure PyTorch on a GPU (no kernel of its own:
`kernel-coverage` rejects it).

How concurrency is reached. `Verifier.evaluate_stream` takes one problem and one seed plan, so candidates go
in groups: one group per (round, problem), each its own stream on a thread of its own, all sharing one
verifier (one pool: one slot per GPU, whose judge serves one problem at a time and is swapped, warmed ahead,
when the next job is another problem's). Groups start in waves: whenever fewer than `jobs` candidates are
unfinished (jobs: the build parallelism, `settings.build_jobs` or one per core, 16 on the H100 machine),
groups are started until at least 2 x jobs are. So each wave puts at least `jobs` new builds up while the
slot is still timing the previous wave's candidates, and builds recur throughout the run instead of all
finishing in the first minute. Each stream has its own build executor as wide as `jobs`, so a shared
semaphore keeps compiles across all streams at `jobs` at once, as one stream would. Every copy of a
candidate carries a comment naming the run and its round: the build cache (keyed by text) serves none of
them, so C, CUDA and load_inline copies are compiled anew (a CuPy module's kernel strings are unchanged, so
their cubins come from the cache after the first; its runner compiles them again anyway). Rounds go
round-major (every candidate once before any repeat), so a run cut short has covered the most distinct ones.

Output: one JSON line per candidate as it finishes (`--out`, appended, so a run cut short still reports),
then a summary (also the file's last line). A false reject is a verdict other than `correct`, a failed
integrity check, or a flag for review, except a flag that is only the speedup threshold's re-measurement
reproducing the speedup (`settings.suspicious_speedup`: policy for any speedup that large, honest or not;
counted on its own). Speed withheld (the clock check could not decide: "no speed credited") is counted, not
a reject. Each line says how many builds ran at most while the candidate waited for and ran its job, and what
share of the CPU other processes used while it was timed. Exits 0 whatever it measured.

    python benchmarks/honest_concurrency.py [--only-library | --only-honest] [--problems a,b] [--rounds N]
        [--seconds S] [--out honest.jsonl]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from engine.compilation.candidate import build_candidate  # noqa: E402 - after the path insert
from engine.compilation.parallel import default_jobs  # noqa: E402
from engine.problems import load_problem, scan_all  # noqa: E402
from engine.problems.model import Problem  # noqa: E402
from engine.schema.verdict import EvaluationResult, Verdict  # noqa: E402
from engine.verify.evaluate import Verifier  # noqa: E402

TESTS = REPO / "tests"
FIXTURE_PROBLEMS = {
    "relu-small": "cheats/problems/pytorch/relu-small",
    "matmul-mean-small": "cheats/problems/pytorch/matmul-mean-small",
    "scale-small": "cheats/problems/c/scale-small",
    "conv-relu-bias": "honest/problems/conv-relu-bias",
    "mse-loss": "honest/problems/mse-loss",
    "matmul-long-k": "honest/problems/matmul-long-k",
    "row-sum-long": "honest/problems/row-sum-long",
}
# (file under tests/, fixture problem), paired as tests/test_verify_honest_gpu.py and test_verify_tolerance.py pair
# them; the fixture problems' own implementations (scale-small's) join by device.
GPU_FIXTURES = (
    ("honest/gpu_two_streams.py", "relu-small"),
    ("honest/gpu_cuda_graph.py", "relu-small"),
    ("honest/gpu_triton.py", "relu-small"),
    ("cheats/gpu_honest.py", "relu-small"),
    ("cheats/gpu_inline_honest.py", "relu-small"),
    ("honest/gpu_epilogue.py", "matmul-mean-small"),
    ("honest/gpu_cublas_own_mean.py", "matmul-mean-small"),
    ("honest/gpu_cudnn_fused_epilogue.py", "conv-relu-bias"),
    ("honest/gpu_own_diff_torch_mean.py", "mse-loss"),
    ("honest/gpu_orders/serial_k.py", "matmul-long-k"),
    ("honest/gpu_orders/split_k_atomic.py", "matmul-long-k"),
    ("honest/gpu_orders/tiled.py", "matmul-long-k"),
    ("honest/gpu_orders/tree_k.py", "matmul-long-k"),
    ("honest/gpu_orders/tree_reduction.py", "row-sum-long"),
    ("honest/gpu_orders/atomic_reduction.py", "row-sum-long"),
)
CPU_FIXTURES = (
    ("cheats/honest.py", "relu-small"),
    ("honest/arithmetic/serial_k.py", "matmul-long-k"),
    ("honest/arithmetic/tree_k.py", "matmul-long-k"),
)
# The reason `Verifier.recheck` gives when an implausible speedup reproduced in a fresh process: policy, not a reject.
THRESHOLD_ONLY = re.compile(r"speedup \S+× is over \S+×: re-measured in a fresh process with new inputs: \S+×; "
                            r"review before trusting it")
# How a result says the clock check could not decide: in a note, and in the stream-escape finding's detail.
WITHHELD_NOTE, WITHHELD_DETAIL = "no speed credited", "no speed is credited"


@dataclass(frozen=True)
class Honest:
    """One honest candidate: a test fixture's file or a shipped implementation, and the problem it solves."""

    origin: str  # honest (a test fixture) | library (a shipped implementation)
    problem: Problem
    name: str
    source: str
    language: str


@dataclass(frozen=True)
class Copy:
    """One submission of an honest candidate: its round, and its source made unique to this run and round."""

    honest: Honest
    round: int
    source: str

    @property
    def key(self) -> str:
        return f"{self.honest.problem.slug}/{self.honest.name}#{self.round}"


def marked(source: str, language: str, tag: str) -> str:
    """The source with a trailing comment: same code, new text, so the build cache holds nothing for it."""
    return f"{source}\n# {tag}\n" if language == "python" else f"{source}\n/* {tag} */\n"


def honest_set(gpu: bool, origins: Sequence[str], slugs: Sequence[str]) -> list[Honest]:
    """The honest candidates for this device (see the module's docstring), of the named problems if any."""
    device = "cuda" if gpu else "cpu"
    found: list[Honest] = []
    if "honest" in origins:
        fixtures = {slug: load_problem(TESTS / path) for slug, path in FIXTURE_PROBLEMS.items()}
        for path, slug in GPU_FIXTURES if gpu else CPU_FIXTURES:
            found.append(Honest("honest", fixtures[slug], path, (TESTS / path).read_text(), "python"))
        found += [Honest("honest", problem, impl.name, impl.source, impl.language)
                  for problem in fixtures.values() for impl in problem.implementations if impl.device == device]
    if "library" in origins:
        found += [Honest("library", problem, impl.name, impl.source, impl.language)
                  for problem in scan_all().problems for impl in problem.implementations if impl.device == device]
    return [h for h in found if not slugs or h.problem.slug in slugs]


def groups_of(candidates: Sequence[Honest], rounds: int, stamp: str) -> list[list[Copy]]:
    """Round-major groups, one per (round, problem), in the set's order."""
    groups: list[list[Copy]] = []
    for round_ in range(rounds):
        by_problem: dict[str, list[Copy]] = {}
        for honest in candidates:
            source = marked(honest.source, honest.language, f"honest-concurrency {stamp} round {round_}")
            by_problem.setdefault(honest.problem.slug, []).append(Copy(honest, round_, source))
        groups += by_problem.values()
    return groups


class BuildGauge:
    """Caps compiles across every stream at `jobs` and tells, per candidate, the most that ran at once while it
    waited for and ran its job (the concurrency it was actually verified under)."""

    def __init__(self, jobs: int) -> None:
        self.slots = threading.BoundedSemaphore(jobs)
        self.lock = threading.Lock()
        self.running = 0
        self.peaks: dict[int, int] = {}
        self.tokens = 0

    def builder(self, *args, **kwargs):
        with self.slots:
            with self.lock:
                self.running += 1
                for token in self.peaks:
                    self.peaks[token] = max(self.peaks[token], self.running)
            try:
                return build_candidate(*args, **kwargs)
            finally:
                with self.lock:
                    self.running -= 1

    def watch(self) -> int:
        with self.lock:
            self.tokens += 1
            self.peaks[self.tokens] = self.running
            return self.tokens

    def peak(self, token: int) -> int:
        with self.lock:
            return self.peaks.pop(token, 0)


@dataclass
class ReportingVerifier(Verifier):
    """The product's verifier, telling `on_result` of each candidate as its job ends (the stream itself returns
    only when its last one has), with the most builds that ran beside it."""

    gauge: BuildGauge | None = None
    on_result: Callable[[str, EvaluationResult, int], None] | None = None

    def run_built(self, problem, source, static, build, seeds=None) -> EvaluationResult:
        token = self.gauge.watch() if self.gauge else 0
        try:
            result = super().run_built(problem, source, static, build, seeds)
        except Exception as exc:  # noqa: BLE001 - a verifier failure is reported as a reject, not lost with the stream
            result = EvaluationResult(Verdict.RUNTIME_ERROR, f"the verifier raised: {exc!r}", notes=["verifier error"])
        if self.on_result is not None:
            self.on_result(source, result, self.gauge.peak(token) if self.gauge else 0)
        return result


def false_reject(result: EvaluationResult) -> str:
    """Why an honest candidate's result is a reject ('' if it is not)."""
    if result.verdict != Verdict.CORRECT:
        return f"{result.verdict}: {result.message[:300]}"
    if result.failed_checks:
        return "failed checks: " + "; ".join(f"{f.check}: {f.detail[:150]}" for f in result.failed_checks)
    if result.flagged and not THRESHOLD_ONLY.fullmatch(result.flag_reason):
        return f"flagged: {result.flag_reason[:300]}"
    return ""


def speed_withheld(result: EvaluationResult) -> bool:
    return any(n.startswith(WITHHELD_NOTE) for n in result.notes) or \
        any(WITHHELD_DETAIL in f.detail for f in result.integrity)


@dataclass
class Tally:
    """Rows as they finish: written at once, counted for the summary."""

    out: TextIO
    started: float
    rows: list[dict] = field(default_factory=list)
    keys: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)
    finished: threading.Condition = field(default_factory=threading.Condition)

    def add(self, copy: Copy, result: EvaluationResult, builds_beside: int) -> None:
        reject = false_reject(result)
        host = result.host
        row = {"problem": copy.honest.problem.slug, "candidate": copy.honest.name, "origin": copy.honest.origin,
               "round": copy.round, "verdict": str(result.verdict), "false_reject": bool(reject), "why": reject,
               "flagged": result.flagged, "flag_reason": result.flag_reason[:300],
               "speed_withheld": speed_withheld(result), "candidate_us": result.candidate_us,
               "speedup": result.speedup, "build_s": result.build_seconds, "worker_s": result.worker_seconds,
               "builds_beside": builds_beside, "others_cpu_pct": host.others_cpu_pct if host else None,
               "device": result.device, "finished_s": round(time.perf_counter() - self.started, 2),
               "message": result.message[:300]}
        with self.lock:
            self.rows.append(row)
            self.keys.add(copy.key)
            self.out.write(json.dumps(row) + "\n")
            self.out.flush()
            print(f"{len(self.rows):4d} {row['finished_s']:8.1f} s  {copy.key:48s} {row['verdict']:20s} "
                  f"builds {builds_beside:2d}  {'FALSE REJECT ' + reject[:100] if reject else ''}", flush=True)
        with self.finished:
            self.finished.notify_all()


def summary(rows: list[dict], wall_s: float, device: str, torch: str) -> dict:
    def median(values: list) -> float | None:
        present = [v for v in values if v is not None]
        return statistics.median(present) if present else None

    rejects = [f"{r['problem']}/{r['candidate']}#{r['round']}: {r['why']}" for r in rows if r["false_reject"]]
    return {"device": device, "torch": torch, "candidates": len(rows), "wall_s": round(wall_s, 1),
            "per_minute": round(60 * len(rows) / wall_s, 2) if wall_s else None,
            "verdicts": dict(Counter(r["verdict"] for r in rows)), "false_rejects": len(rejects),
            "false_reject_list": rejects, "speed_withheld": sum(r["speed_withheld"] for r in rows),
            "flagged_by_speedup_threshold": sum(r["flagged"] and not r["false_reject"] for r in rows),
            "builds_beside_median": median([r["builds_beside"] for r in rows]),
            "builds_beside_max": max((r["builds_beside"] for r in rows), default=0),
            "others_cpu_pct_median": median([r["others_cpu_pct"] for r in rows])}


def run(args: argparse.Namespace, out: TextIO) -> dict:
    """Verify the honest set as the module's docstring says; the summary."""
    jobs = default_jobs()
    gauge = BuildGauge(jobs)
    verifier = ReportingVerifier(gauge=gauge, builder=gauge.builder)
    with verifier:
        gpu = verifier.has_gpu()
        device, torch = verifier.device_name(), verifier.ensure_pool().info.torch
        print(f"device: {device}; torch {torch}; {jobs} builds at once", flush=True)
        origins = ["library"] if args.only_library else ["honest"] if args.only_honest else ["honest", "library"]
        candidates = honest_set(gpu, origins, [s for s in args.problems.split(",") if s])
        if not candidates:
            print("no honest candidates for this device and these problems", flush=True)
        rounds = args.rounds or max(1, math.ceil(2 * jobs / max(1, len(candidates))))
        pending = deque(groups_of(candidates, rounds, str(int(time.time()))))
        print(f"{len(candidates)} honest candidates x {rounds} rounds in {len(pending)} groups", flush=True)
        started = time.perf_counter()
        tally = Tally(out, started)
        by_source: dict[str, Copy] = {}
        verifier.on_result = lambda source, result, beside: tally.add(by_source[source], result, beside)
        submitted = 0

        def unfinished() -> int:
            return submitted - len(tally.rows)

        def verify(group: list[Copy]) -> None:
            try:
                results = verifier.evaluate_stream(group[0].honest.problem,
                                                   ((c.key, c.source, c.honest.language) for c in group))
            except Exception as exc:  # noqa: BLE001 - the rest of the run goes on; the group's candidates say why
                results = {c.key: EvaluationResult(Verdict.RUNTIME_ERROR, f"the stream raised: {exc!r}") for c in group}
            for copy in group:  # verdicts reached before a build (static rules) never pass through run_built
                if copy.key not in tally.keys:
                    tally.add(copy, results.get(copy.key) or EvaluationResult(Verdict.RUNTIME_ERROR, "no result"), 0)

        def time_left() -> float | None:
            return max(0.0, started + args.seconds - time.perf_counter()) if args.seconds else None

        with ThreadPoolExecutor(max_workers=max(1, len(pending)), thread_name_prefix="group") as streams:
            while pending and time_left() != 0:
                with tally.finished:  # a wave: once fewer than `jobs` are unfinished, up to 2 x jobs
                    tally.finished.wait_for(lambda: unfinished() < jobs, timeout=time_left())
                while pending and unfinished() < 2 * jobs and time_left() != 0:
                    group = pending.popleft()
                    by_source.update({c.source: c for c in group})
                    submitted += len(group)
                    streams.submit(verify, group)
            if pending:
                print(f"stopped submitting after {args.seconds:.0f} s: {sum(map(len, pending))} candidates not "
                      "started", flush=True)
        report = summary(tally.rows, time.perf_counter() - started, device, torch)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--only-library", action="store_true", help="only the shipped implementations")
    which.add_argument("--only-honest", action="store_true", help="only the honest test fixtures")
    parser.add_argument("--problems", default="", help="only these problems (slugs, comma-separated)")
    parser.add_argument("--rounds", type=int, default=0,
                        help="times the set is submitted (default: enough for two waves of builds)")
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="stop submitting after this long and finish what is in flight (0: no limit)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "honest.jsonl")
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a") as out:
        report = run(args, out)
        out.write(json.dumps({"summary": report}) + "\n")
    print("summary:", json.dumps(report), flush=True)
    print(f"{report['candidates']} candidates in {report['wall_s']} s ({report['per_minute']}/min) on "
          f"{report['device']}, torch {report['torch']}: {report['verdicts']}; speed withheld "
          f"{report['speed_withheld']}; builds beside a job: median {report['builds_beside_median']}, "
          f"most {report['builds_beside_max']}")
    for line in report["false_reject_list"]:
        print(f"  false reject: {line}")
    print(f"FALSE REJECTS: {report['false_rejects']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
