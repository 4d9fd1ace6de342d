"""Do honest candidates still time as they did? The shipped library measured now against the recording.

Why: the verifier's split into a judge (which owns the clock, the inputs and the verdict) and a runner
(which only calls the candidate) must not change what an honest candidate measures. On the shipped
problem library every implementation is honest, so each one's median on the timed configuration
should stay within 5 % of the H200 library check recorded before the rewrite
(assets/recorded/h200-library-check.jsonl, 2026-12-03). A drift that the eager (or C-reference)
baselines share says the machine differs rather than the verifier; the speedup against that baseline
(baseline / candidate, on each side) cancels such a shift, so its agreement is the verifier's own.

Each candidate is identified by (problem slug, implementation name): on the recording's side the
run's `problem_slug` and the candidate's `proposal["implementation"]`; on the NOW side the line's
`problem` and `implementation`, as `tests/test_verify_gpu.py` writes them with
REFINERY_LIBRARY_RESULTS set (read by `benchmarks/library_recording.py`'s own reader, so a later
line for the same implementation replaces an earlier one). A pair is compared when both verdicts are
correct and both timed the same configuration with the same clock; the times are the timed
configuration's `candidate.median_us` and `baselines[name].median_us`.

    .venv/bin/python benchmarks/library_timing_agreement.py NOW.jsonl \
        [--before assets/recorded/h200-library-check.jsonl] [--json out.json]

Exit status 0 whatever the agreement (this is a report), 2 when an input cannot be read.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from db.models import Evaluation  # noqa: E402 - after the path insert
from engine.schema.verdict import EvaluationResult, TimingStats  # noqa: E402
from engine.store.evaluation import result_from_row  # noqa: E402

DEFAULT_BEFORE = ROOT / "assets" / "recorded" / "h200-library-check.jsonl"
TOLERANCE = 0.05  # |now / before - 1| at most this counts as agreeing
WORST = 10
CORRECT = "correct"

Key = tuple[str, str]  # (problem slug, implementation name)


@dataclass(frozen=True)
class Measured:
    """What one side says about one candidate: its verdict and the timed configuration's times."""

    verdict: str
    timed_config: str | None
    candidate: TimingStats | None
    baselines: dict[str, TimingStats]
    reference: str | None  # the baseline the verifier compared against (eager, naive-cuda, …)
    device: str | None


@dataclass(frozen=True)
class Ratio:
    """One time (or speedup) before and now; `ratio` is now / before."""

    problem: str
    implementation: str
    config: str
    before: float
    now: float
    ratio: float
    baseline: str | None = None  # for baseline and speedup rows: which baseline


@dataclass
class Comparison:
    """Everything the report says: ratio tables and the candidates that could not be compared, with why."""

    candidates: list[Ratio] = field(default_factory=list)
    baselines: dict[str, list[Ratio]] = field(default_factory=dict)
    speedups: list[Ratio] = field(default_factory=list)
    missing_now: list[Key] = field(default_factory=list)
    missing_before: list[Key] = field(default_factory=list)
    verdict_changed: list[tuple[Key, str, str]] = field(default_factory=list)
    not_comparable: list[tuple[Key, str]] = field(default_factory=list)


class UnreadableInput(Exception):
    """An input file that is missing or not in the expected format (exit status 2)."""


# --- reading -------------------------------------------------------------------------------------------


def _library_recording() -> ModuleType:
    """benchmarks/library_recording.py, whose reader defines what a NOW line is (registered once by name,
    as its dataclasses look their module up)."""
    name = "library_recording"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def measured(result: EvaluationResult, reference: str | None = None) -> Measured:
    """The timed configuration's times of `result` (the one named timed_config, else the first timed one)."""
    timed = [c for c in result.configs if c.candidate is not None]
    config = next((c for c in timed if c.name == result.timed_config), timed[0] if timed else None)
    return Measured(verdict=str(result.verdict), timed_config=config.name if config else result.timed_config,
                    candidate=config.candidate if config else None, baselines=dict(config.baselines) if config else {},
                    reference=reference or result.baseline_name, device=result.device)


def _recorded_evaluation(evaluation: dict) -> Measured:
    """A recording's evaluation row through the project's own row → record mapping."""
    return measured(result_from_row(Evaluation.model_validate({**evaluation, "candidate_id": 0})))


def read_before(path: Path) -> dict[Key, Measured]:
    """Per candidate, its newest evaluation in a recording (engine/store/recorded.py: one run per line), or its
    result in another library check's lines: an earlier commit's check run on the same card in the same
    device call is the baseline that does not depend on which card the recording was made on."""
    if _is_library_check(path):
        return read_now(path)
    found: dict[Key, Measured] = {}
    try:
        lines = Path(path).read_text().splitlines()
        for number, text in enumerate(lines, 1):
            if not text.strip():
                continue
            record = json.loads(text)
            slug = record["run"]["problem_slug"]
            for candidate in record["candidates"]:
                if not candidate["evaluations"]:
                    continue
                name = (candidate.get("proposal") or {}).get("implementation")
                if name is None:
                    raise ValueError(f"{path}:{number}: a candidate without proposal.implementation")
                found[(slug, name)] = _recorded_evaluation(candidate["evaluations"][-1])
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise UnreadableInput(f"{path}: not a readable recording ({exc})") from exc
    return found


def _is_library_check(path: Path) -> bool:
    """Whether `path` holds library check lines (a "problem" per line) rather than recorded runs."""
    try:
        with Path(path).open() as lines:
            first = next((line for line in lines if line.strip()), "")
        return "problem" in json.loads(first) if first else False
    except (OSError, ValueError, TypeError):
        return False


def read_now(path: Path) -> dict[Key, Measured]:
    """Per candidate, its result in a library check's JSON lines (the latest line per implementation)."""
    script = _library_recording()
    try:
        groups = script.read_results(Path(path))
        return {(group.slug, name): measured(script.measured_result(line))
                for group in groups for name, line in group.lines.items()}
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise UnreadableInput(f"{path}: not readable library check results ({exc})") from exc


# --- comparing -----------------------------------------------------------------------------------------


def _ratio(key: Key, config: str, before: float, now: float, baseline: str | None = None) -> Ratio:
    return Ratio(key[0], key[1], config, before, now, now / before, baseline)


def _why_not_comparable(before: Measured, now: Measured) -> str | None:
    """None when the two candidate timings measure the same thing; else the reason they do not."""
    if before.verdict != CORRECT:
        return f"not correct on either side ({before.verdict})"
    if before.candidate is None or now.candidate is None:
        return "no timing " + ("before" if before.candidate is None else "now")
    if before.timed_config != now.timed_config:
        return f"timed on {before.timed_config!r} before, {now.timed_config!r} now"
    if before.candidate.clock != now.candidate.clock:
        return f"clock {before.candidate.clock} before, {now.candidate.clock} now"
    if before.candidate.median_us <= 0 or now.candidate.median_us <= 0:
        return "a median of zero"
    return None


def _baseline_rows(key: Key, before: Measured, now: Measured) -> dict[str, Ratio]:
    """Each baseline timed on both sides (same configuration, same clock), by name."""
    rows = {}
    for name in sorted(set(before.baselines) & set(now.baselines)):
        b, n = before.baselines[name], now.baselines[name]
        if b.clock == n.clock and b.median_us > 0 and n.median_us > 0:
            rows[name] = _ratio(key, before.timed_config or "", b.median_us, n.median_us, name)
    return rows


def _speedup_row(key: Key, before: Measured, now: Measured) -> Ratio | None:
    """Baseline / candidate on each side: eager where both have it, else the recording's named baseline."""
    shared = set(before.baselines) & set(now.baselines)
    name = "eager" if "eager" in shared else before.reference if before.reference in shared else None
    if name is None:
        return None
    speedup_before = before.baselines[name].median_us / before.candidate.median_us
    speedup_now = now.baselines[name].median_us / now.candidate.median_us
    return _ratio(key, before.timed_config or "", speedup_before, speedup_now, name)


def compare(before: dict[Key, Measured], now: dict[Key, Measured]) -> Comparison:
    """The ratio tables and the candidates left out of them, each with the reason."""
    out = Comparison(missing_now=sorted(set(before) - set(now)), missing_before=sorted(set(now) - set(before)))
    for key in sorted(set(before) & set(now)):
        b, n = before[key], now[key]
        if b.verdict != n.verdict:
            out.verdict_changed.append((key, b.verdict, n.verdict))
            continue
        reason = _why_not_comparable(b, n)
        if reason:
            out.not_comparable.append((key, reason))
            continue
        out.candidates.append(_ratio(key, b.timed_config or "", b.candidate.median_us, n.candidate.median_us))
        for name, row in _baseline_rows(key, b, n).items():
            out.baselines.setdefault(name, []).append(row)
        speedup = _speedup_row(key, b, n)
        if speedup is not None:
            out.speedups.append(speedup)
    return out


def summarise(rows: Sequence[Ratio], tolerance: float = TOLERANCE) -> dict:
    """Counts within tolerance, the median |ratio - 1|, the geometric mean ratio and the worst rows
    (by |log ratio|, so that twice as slow and twice as fast weigh the same)."""
    deviations = [abs(r.ratio - 1) for r in rows]
    within = sum(d <= tolerance for d in deviations)
    worst = sorted(rows, key=lambda r: abs(math.log(r.ratio)), reverse=True)[:WORST]
    return {"matched": len(rows), "within": within, "outside": len(rows) - within, "tolerance": tolerance,
            "median_abs_deviation": statistics.median(deviations) if rows else None,
            "geomean_ratio": math.exp(statistics.fmean(math.log(r.ratio) for r in rows)) if rows else None,
            "worst": [asdict(r) for r in worst]}


def devices(side: dict[Key, Measured]) -> list[str]:
    return sorted({m.device for m in side.values() if m.device and m.device != "cpu"})


def report_json(comparison: Comparison, before: dict[Key, Measured], now: dict[Key, Measured],
                paths: tuple[Path, Path]) -> dict:
    """The whole report as JSON (what --json writes)."""
    def keys(items: Iterable[Key]) -> list[dict]:
        return [{"problem": p, "implementation": i} for p, i in items]

    return {
        "before": str(paths[0]), "now": str(paths[1]),
        "devices": {"before": devices(before), "now": devices(now)},
        "candidates": {"rows": [asdict(r) for r in comparison.candidates], "summary": summarise(comparison.candidates)},
        "baselines": {name: {"rows": [asdict(r) for r in rows], "summary": summarise(rows)}
                      for name, rows in sorted(comparison.baselines.items())},
        "speedups": {"rows": [asdict(r) for r in comparison.speedups], "summary": summarise(comparison.speedups)},
        "missing_now": keys(comparison.missing_now), "missing_before": keys(comparison.missing_before),
        "verdict_changed": [{"problem": k[0], "implementation": k[1], "before": b, "now": n}
                            for k, b, n in comparison.verdict_changed],
        "not_comparable": [{"problem": k[0], "implementation": k[1], "reason": why}
                           for k, why in comparison.not_comparable],
    }


# --- printing ------------------------------------------------------------------------------------------


def _label(row: Ratio) -> str:
    return f"{row.problem}/{row.implementation}"


def print_table(title: str, rows: Sequence[Ratio], unit: str = "µs") -> None:
    print(f"\n{title}")
    print(f"  {'candidate':<44}{'config':<12}{'before ' + unit:>14}{'now ' + unit:>14}{'now/before':>12}")
    for r in rows:
        mark = "" if abs(r.ratio - 1) <= TOLERANCE else "  *"
        print(f"  {_label(r):<44}{r.config:<12}{r.before:>14.3f}{r.now:>14.3f}{r.ratio:>12.3f}{mark}")


def print_summary(title: str, summary: dict) -> None:
    if not summary["matched"]:
        print(f"\n{title}: nothing to compare")
        return
    print(f"\n{title}: {summary['matched']} matched, {summary['within']} within ±{summary['tolerance']:.0%}, "
          f"{summary['outside']} outside; median |ratio-1| {summary['median_abs_deviation']:.2%}, "
          f"geometric mean ratio {summary['geomean_ratio']:.3f}")
    for r in summary["worst"]:
        label = f"{r['problem']}/{r['implementation']}"
        print(f"    {label:<44} {r['before']:.3f} → {r['now']:.3f}  ×{r['ratio']:.3f}")


def print_keys(title: str, items: Sequence[str]) -> None:
    print(f"\n{title}: {len(items)}")
    for item in items:
        print(f"    {item}")


def print_report(comparison: Comparison, report: dict) -> None:
    print(f"before: {report['before']} ({', '.join(report['devices']['before']) or 'no GPU named'})")
    print(f"now:    {report['now']} ({', '.join(report['devices']['now']) or 'no GPU named'})")
    print_table("candidate median on the timed configuration", comparison.candidates)
    for name, rows in sorted(comparison.baselines.items()):
        print_table(f"baseline {name} median", rows)
    print_table("speedup (baseline / candidate)", comparison.speedups, unit="×")
    print_summary("candidates", report["candidates"]["summary"])
    for name, part in report["baselines"].items():
        print_summary(f"baseline {name}", part["summary"])
    print_summary("speedups", report["speedups"]["summary"])
    print_keys("missing now (in the recording only)", [f"{p}/{i}" for p, i in comparison.missing_now])
    print_keys("missing before (in NOW only)", [f"{p}/{i}" for p, i in comparison.missing_before])
    print_keys("verdict changed", [f"{p}/{i}: {b} → {n}" for (p, i), b, n in comparison.verdict_changed])
    print_keys("not comparable", [f"{p}/{i}: {why}" for (p, i), why in comparison.not_comparable])
    _print_machine_hint(report)


def _print_machine_hint(report: dict) -> None:
    """Say so when the baselines moved with the candidates: then the machine, not the verifier, differs."""
    eager = report["baselines"].get("eager", {}).get("summary", {})
    cand = report["candidates"]["summary"]
    if eager.get("matched") and cand["matched"] and abs(eager["geomean_ratio"] - 1) > TOLERANCE:
        print(f"\nnote: the eager baseline moved too (geometric mean ×{eager['geomean_ratio']:.3f}); "
              "the machine likely differs, so read the speedup agreement rather than the raw times")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("now", type=Path, help="JSONL written by tests/test_verify_gpu.py (REFINERY_LIBRARY_RESULTS)")
    parser.add_argument("--before", type=Path, default=DEFAULT_BEFORE,
                        help=f"recording, or another library check's lines (default {DEFAULT_BEFORE})")
    parser.add_argument("--json", type=Path, default=None, help="also write the report as JSON here")
    args = parser.parse_args(argv)
    try:
        before, now = read_before(args.before), read_now(args.now)
    except UnreadableInput as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    comparison = compare(before, now)
    report = report_json(comparison, before, now, (args.before, args.now))
    print_report(comparison, report)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
