"""Real re-timing on this CPU: how many exported measured pairs reverse when their codes are measured again,
under the old rule (one evaluation per code: the latest, a 1.1x margin and a Mann–Whitney test on its trials)
and the pooled rule (`engine.rank.pooled` through `engine.rank.pairs.measured_pairs`).

gemm's CPU codes (the shipped cpu-naive, cpu-blocked and cpu-vectorized, the blocked and vectorized ones also
at two other tile settings, and the C reference itself: close pairs among them, as a run's tunable climb
makes) are each verified `--rounds` times by the real verifier (`engine.verify.evaluate.Verifier`, one warm
worker pool, each round in a fresh shuffled order so that drift of the host does not favour one code), and
every evaluation is stored in a temporary SQLite database by the writer `refinery verify` uses. After each of
the first `--export-rounds` rounds the evidence is loaded back as an export loads it and both rules make
their pairs; the rounds after them are the re-measurement, used for nothing else.

A pair *reverses* when the median of its two codes' re-measured levels (time over the same evaluation's
baseline time) orders them the other way. The re-measurement is noisy too, so a pair whose two codes are
truly close can "reverse" by the re-measurement's own noise: the pair is also said to be *contradicted* only
when the re-measurement alone holds the other order (the pooled test at the same level), and *confirmed* when
it holds the pair's order.

`--load N` keeps N busy processes spinning on the host while it measures, a stand-in for the busy machine
the issue measured on (its own 16 evaluations of one gemm code spanned 1.34–2.64×).

    python benchmarks/remeasured_pairs_cpu.py [--rounds 8] [--export-rounds 3] [--load 0] [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROBLEM = "gemm"
OLD_MIN_SAMPLES = 8  # the old rule's fewest trials for a Mann–Whitney test (engine/rank/comparable.py at 42753be)
# (name, shipped implementation, tunables set on it); None: the implementation as shipped
CODES: tuple[tuple[str, str, dict[str, int] | None], ...] = (
    ("c-reference", "", None),
    ("cpu-naive", "cpu-naive", None),
    ("cpu-blocked", "cpu-blocked", None),
    ("cpu-blocked KC=64 NC=128", "cpu-blocked", {"KC": 64, "NC": 128}),
    ("cpu-blocked KC=256 NC=512", "cpu-blocked", {"KC": 256, "NC": 512}),
    ("cpu-vectorized", "cpu-vectorized", None),
    ("cpu-vectorized KC=64 NC=128", "cpu-vectorized", {"KC": 64, "NC": 128}),
    ("cpu-vectorized KC=256 NC=512", "cpu-vectorized", {"KC": 256, "NC": 512}),
)


def code_sources(problem) -> dict[str, str]:
    from engine.propose.library import set_tunables

    out = {}
    for name, impl, tunables in CODES:
        source = problem.implementation(impl).source if impl else problem.reference_source
        out[name] = set_tunables(source, "c", tunables) if tunables else source
    return out


# The old rule, as engine/rank/pairs.py and engine/rank/comparable.py had it at 42753be -------------------

def _old_level(m) -> float | None:
    if m.candidate_us is None:
        return 1.0 / m.speedup if m.speedup else None
    return m.candidate_us / m.baseline_us if m.baseline_us else m.candidate_us


def _old_real(a, b, alpha: float, min_ratio: float) -> tuple[float, float, bool] | None:
    """(log ratio, p, real) of the old test on the latest evaluations' trials; > 0: `a` faster."""
    from scipy.stats import mannwhitneyu

    level_a, level_b = _old_level(a), _old_level(b)
    if not level_a or not level_b:
        return None
    log_ratio = math.log(level_b / level_a)
    big_enough = abs(log_ratio) >= math.log(min_ratio) - 1e-12
    if len(a.samples_us) < OLD_MIN_SAMPLES or len(b.samples_us) < OLD_MIN_SAMPLES:
        return log_ratio, 1.0, False
    scaled = [[t / (m.baseline_us or 1.0) for t in m.samples_us] for m in (a, b)]
    p_value = float(mannwhitneyu(scaled[0], scaled[1], alternative="two-sided").pvalue)
    return log_ratio, p_value, big_enough and p_value < alpha


def old_rule_pairs(evidence, alpha: float = 0.01, min_ratio: float = 1.10) -> list[tuple[int, int]]:
    """(faster id, slower id) as the old export made them: each code's latest evaluation only."""
    out = []
    items = [item for item in evidence if item.measurements]
    for i, a in enumerate(items):
        for b in items[i + 1:]:
            found = _old_real(a.measurements[0], b.measurements[0], alpha, min_ratio)
            if found and found[2]:
                out.append((a.id, b.id) if found[0] > 0 else (b.id, a.id))
    return out


def pooled_rule_pairs(evidence) -> list[tuple[int, int]]:
    from engine.rank.pairs import measured_pairs

    return [(p.a, p.b) if p.target == 1.0 else (p.b, p.a) for p in measured_pairs(evidence)]


# Re-measurement ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Verdicts:
    pairs: int
    reversed: int  # the re-measured medians order them the other way
    contradicted: int  # the re-measurement alone holds the other order
    confirmed: int  # the re-measurement alone holds the pair's order
    reversed_pairs: tuple[tuple[str, str], ...]

    def to_json(self) -> dict:
        return {"pairs": self.pairs, "reversed": self.reversed, "contradicted": self.contradicted,
                "confirmed": self.confirmed, "reversed_pairs": [list(p) for p in self.reversed_pairs]}


def judge(pairs: Sequence[tuple[int, int]], remeasured: dict[int, list[float]], name_of: dict[int, str]) -> Verdicts:
    """Each (faster, slower) pair against the re-measured levels alone (see the module)."""
    from engine.rank.pooled import Source, estimate_spread, held_difference

    sources = {cid: Source((cid,), tuple(math.log(x) for x in levels)) for cid, levels in remeasured.items()}
    spread = estimate_spread(list(sources.values()), "cpu")
    flipped, against, held, names = 0, 0, 0, []
    for faster, slower in pairs:
        if sources[faster].centre > sources[slower].centre:
            flipped += 1
            names.append((name_of[faster], name_of[slower]))
        found = held_difference(sources[faster], sources[slower], spread, min_ratio=1.0)
        if found.real:
            against += found.log_ratio < 0
            held += found.log_ratio > 0
    return Verdicts(len(pairs), flipped, against, held, tuple(names))


def _spin(stop) -> None:
    while not stop.is_set():
        sum(range(10_000))


@contextmanager
def busy_host(processes: int) -> Iterator[None]:
    """`processes` CPU-bound processes running for the duration (none for 0)."""
    stop = multiprocessing.Event()
    workers = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(processes)]
    for worker in workers:
        worker.start()
    try:
        yield
    finally:
        stop.set()
        for worker in workers:
            worker.join(timeout=5)


# The run ----------------------------------------------------------------------------------------------

def open_temporary_database(home: Path) -> str:
    os.environ["REFINERY_HOME"] = str(home)
    os.environ.pop("REFINERY_DATABASE_URL", None)
    from db.session import reset_engines
    from engine.settings import get_settings
    from engine.store.database import open_settings_database

    get_settings.cache_clear()
    reset_engines()
    return open_settings_database()


def measure(rounds: int, export_rounds: int, seed: int, min_seconds: float, max_seconds: float) -> dict:
    from db.labels import load_evidence
    from engine.problems import get_problem
    from engine.settings import get_settings
    from engine.store.evaluation import store_evaluation
    from engine.verify.evaluate import Verifier, VerifyOptions
    from engine.verify.pool import PoolConfig, WorkerPool
    from engine.verify.prepare import TimingOptions
    from engine.wire.policy import TrialPolicy

    problem = get_problem(PROBLEM)
    sources = code_sources(problem)
    policy = TrialPolicy(min_trials=20, min_seconds=min_seconds, max_trials=1000, max_seconds=max_seconds,
                         flush_bytes=1 << 20)
    options = VerifyOptions(timing_policy=TimingOptions(policy), timeout_s=300)
    settings = get_settings()
    rng = random.Random(seed)
    ids: dict[str, int] = {}
    levels: dict[str, list[float | None]] = defaultdict(list)
    exports: dict[int, dict[str, list[tuple[int, int]]]] = {}
    started = time.perf_counter()
    pool = WorkerPool(config=PoolConfig.from_settings(settings))
    try:
        verifier = Verifier(pool=pool, options=options, settings=settings)
        for round_no in range(1, rounds + 1):
            order = list(sources)
            rng.shuffle(order)
            for name in order:
                result = verifier.evaluate(problem, sources[name], "c")
                ids[name], _ = store_evaluation(result, problem_slug=PROBLEM, source=sources[name], language="c",
                                                origin="library", strategy=name, candidate_id=ids.get(name))
                level = (result.candidate_us / result.baseline_us
                         if str(result.verdict) == "correct" and result.candidate_us and result.baseline_us else None)
                levels[name].append(level)
                print(f"round {round_no} {name:30s} {result.verdict} "
                      f"{'' if level is None else f'{1 / level:.2f}x'}  ({time.perf_counter() - started:.0f} s)",
                      flush=True)
            if round_no <= export_rounds:
                evidence = load_evidence(problem_slugs=[PROBLEM], with_source=False)
                exports[round_no] = {"old": old_rule_pairs(evidence), "pooled": pooled_rule_pairs(evidence)}
    finally:
        pool.close()
    name_of = {cid: name for name, cid in ids.items()}
    remeasured = {ids[name]: [x for x in found[export_rounds:] if x] for name, found in levels.items()}
    results = {k: {rule: judge(pairs, remeasured, name_of) for rule, pairs in by_rule.items()}
               for k, by_rule in exports.items()}
    return {"problem": PROBLEM, "rounds": rounds, "export_rounds": export_rounds, "seed": seed,
            "timing": asdict(policy),
            "machine": f"{platform.node()} ({os.cpu_count()} cores, {platform.processor() or platform.machine()})",
            "wall_seconds": round(time.perf_counter() - started, 1),
            "speedups": {name: [None if x is None else round(1 / x, 4) for x in found]
                         for name, found in levels.items()},
            "remeasured_median_speedup": {
                name_of[cid]: round(math.exp(-statistics.median(math.log(x) for x in found)), 4)
                for cid, found in remeasured.items() if found},
            "exports": {str(k): {rule: v.to_json() for rule, v in by_rule.items()} for k, by_rule in results.items()}}


def report(data: dict) -> None:
    print(f"\n{data['problem']}: {len(data['speedups'])} codes verified {data['rounds']} times each "
          f"({data['wall_seconds']:.0f} s); exports after rounds 1..{data['export_rounds']}, "
          f"re-measured by rounds {data['export_rounds'] + 1}..{data['rounds']}")
    print("| code | speedups, round by round | re-measured median |")
    print("|---|---|---|")
    for name, found in data["speedups"].items():
        shown = " ".join("–" if x is None else f"{x:.2f}" for x in found)
        print(f"| {name} | {shown} | {data['remeasured_median_speedup'].get(name, float('nan')):.2f}× |")
    print("\n| evaluations per code at export | rule | pairs | reversed on re-measurement | "
          "contradicted (re-measurement holds the other order) | confirmed |")
    print("|---|---|---|---|---|---|")
    for k, by_rule in data["exports"].items():
        for rule, v in by_rule.items():
            share = f"{v['reversed'] / v['pairs']:.0%} ({v['reversed']}/{v['pairs']})" if v["pairs"] else "no pairs"
            print(f"| {k} | {rule} | {v['pairs']} | {share} | {v['contradicted']} | {v['confirmed']} |")
    for k, by_rule in data["exports"].items():
        for rule, v in by_rule.items():
            for faster, slower in v["reversed_pairs"]:
                print(f"  after round {k}, {rule}: {faster} > {slower} reversed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--export-rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-seconds", type=float, default=0.2, help="timing budget per side, at least")
    parser.add_argument("--max-seconds", type=float, default=1.0)
    parser.add_argument("--load", type=int, default=0, help="busy processes competing for the cores meanwhile")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not 1 <= args.export_rounds < args.rounds:
        parser.error("--export-rounds must leave at least one round to re-measure with")
    with tempfile.TemporaryDirectory(prefix="remeasured-pairs-") as home:
        open_temporary_database(Path(home))
        with busy_host(args.load):
            data = measure(args.rounds, args.export_rounds, args.seed, args.min_seconds, args.max_seconds)
        data["busy_processes"] = args.load
    report(data)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=2) + "\n")


if __name__ == "__main__":
    main()
