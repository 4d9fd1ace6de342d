"""The GPU library check's results as a shipped recording of real runs.

`tests/test_verify_gpu.py` (with REFINERY_LIBRARY_RESULTS set) measures every shipped CUDA
implementation on the device machine and writes one JSON line per result. This script turns those
lines into a recording (engine/store/recorded.py): per problem one finished run, proposer "library",
strategy "library-check", with one candidate per implementation, its evaluation and its
diagnostics. The rows are built by the same code a real run uses (`engine.runs.pipeline.outcome_of` for
static analysis, diagnostics, feedback and reward; `db.runs_repo.store_step` to store them), with
the static analysis aimed at the GPU the results came from.

Why: with the measured library shipped, a machine with no GPU can label, rank and export real
measurements at once, and the ranker gets measured pairs (same problem, same device) from every
implementation of every problem, not only from the few a search happened to visit.

The lines hold no source: each candidate's source is read from the problem library as it is now,
so run this from the same commit as the check.

    .venv/bin/python benchmarks/library_recording.py RESULTS.jsonl [--out assets/recorded/h200-library-check.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from db import runs_repo
from db.models import Candidate, Run, utcnow
from db.session import reset_engines, use_database
from engine.analysis import match_device
from engine.compilation.cuda import content_key
from engine.problems import Problem, get_problem
from engine.propose import Proposal
from engine.propose.library import current_tunables, signature
from engine.runs.pipeline import outcome_of
from engine.runs.run import RunRequest
from engine.schema.verdict import EvaluationResult, without_profiler_marker
from engine.settings import Settings, get_settings
from engine.store.recorded import RECORDED_DIR, save_recording

PROPOSER = "library"
STRATEGY = "library-check"
DEFAULT_OUT = RECORDED_DIR / "h200-library-check.jsonl"
_FIELDS = {"problem", "implementation", "strategy", "language", "result"}
_CPU_DEVICES = {None, "", "cpu"}  # a candidate that failed to build reports "cpu", not the GPU it was meant for


@dataclass
class ProblemResults:
    """One problem's lines, the latest per implementation, in file order."""

    slug: str
    lines: dict[str, dict]
    replaced: int = 0  # lines superseded by a later line for the same implementation

    @property
    def device(self) -> str:
        """The GPU the results were measured on (one per problem: two machines need two files)."""
        devices = {line["result"].get("device") for line in self.lines.values()} - _CPU_DEVICES
        if len(devices) > 1:
            raise ValueError(f"{self.slug}: results from several devices ({', '.join(sorted(devices))}); "
                             "record each machine's results separately")
        return devices.pop() if devices else "cpu"


def read_results(path: Path) -> list[ProblemResults]:
    """The results file grouped by problem, in the order the problems first appear."""
    problems: dict[str, ProblemResults] = {}
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc})") from exc
        missing = _FIELDS - set(line) if isinstance(line, dict) else _FIELDS
        if missing:
            raise ValueError(f"{path}:{number}: not a library check result (no {', '.join(sorted(missing))})")
        slug, name = line["problem"], line["implementation"]
        group = problems.setdefault(slug, ProblemResults(slug, {}))
        if name in group.lines:
            group.replaced += 1
            del group.lines[name]  # the re-measured result, at the position of its latest line
        group.lines[name] = line
    return list(problems.values())


def arch_for(device: str) -> str | None:
    """The `sm_XY` of a device name (H200/H100 → sm_90); None (the settings' gpu_arch) if unknown."""
    entry = match_device(device) if device not in _CPU_DEVICES else None
    return entry.arch if entry else None


def _proposal(problem: Problem, line: dict) -> Proposal:
    """The library proposer's proposal for an implementation at its shipped tunables."""
    impl = problem.implementation(line["implementation"])
    if impl.language != line["language"]:
        raise ValueError(f"{problem.slug}/{impl.name}: measured as {line['language']}, but the library's source "
                         f"is {impl.language}; record from the commit the check ran on")
    tunables = current_tunables(impl)
    sig = signature(impl, tunables)
    meta = {"implementation": impl.name, "strategy": line["strategy"], "tunables": tunables, "signature": sig,
            "because": STRATEGY, "hint": None}
    return Proposal(source=impl.source, language=impl.language, origin=PROPOSER, signature=sig,
                    strategy=line["strategy"], meta=meta)


def measured_result(line: dict) -> EvaluationResult:
    """The line's evaluation; lines measured while the profiler's own range still counted as a kernel get
    their kernel shares (and the coverage finding that quotes them) re-derived from the same timings."""
    result = EvaluationResult.from_json(line["result"])
    kernels = without_profiler_marker(result.kernels)
    if kernels is result.kernels:
        return result
    result.kernels = kernels
    share = result.own_kernel_share or 0.0
    for finding in result.integrity:
        if finding.check == "kernel-coverage" and finding.passed:
            finding.detail = f"own kernels {share:.0%} of GPU time (re-derived without the profiler's range)"
    return result


def record_problem(group: ProblemResults, settings: Settings) -> tuple[int, Counter]:
    """Store one finished run of `group` in the settings' database; returns (run id, verdict counts)."""
    problem = get_problem(group.slug)
    device, arch = group.device, arch_for(group.device)
    request = RunRequest(problem.slug, proposer=PROPOSER, strategy=STRATEGY, rounds=1, samples=len(group.lines),
                         device="gpu" if device != "cpu" else "cpu")
    run = runs_repo.create_run(Run(problem_slug=problem.slug, proposer=PROPOSER, strategy=STRATEGY, rounds_budget=1,
                                   status="running", config=asdict(request), device=device, started_at=utcnow()))
    items = []
    for line in group.lines.values():
        proposal = _proposal(problem, line)
        outcome = outcome_of(problem, proposal, measured_result(line), settings, arch=arch)
        candidate = Candidate(problem_slug=problem.slug, parent_id=None, depth=0, origin=proposal.origin,
                              strategy=proposal.strategy, language=proposal.language, source=proposal.source,
                              source_hash=content_key(proposal.source), proposal=proposal.meta)
        items.append(runs_repo.StoredStep(candidate, outcome.evaluation_row(), outcome.diagnostic_rows()))
    runs_repo.store_step(run.id, 1, items)
    runs_repo.update_run(run.id, status="finished", finished_at=utcnow())
    return run.id, Counter(item.evaluation.verdict for item in items)


@contextmanager
def scratch_database(folder: Path) -> Iterator[str]:
    """This process's database switched to a new SQLite file in `folder` (switched back on exit); yields its URL."""
    url = f"sqlite:///{Path(folder) / 'library-check.db'}"
    previous = use_database(url)
    try:
        yield url
    finally:
        use_database(previous)
        reset_engines()  # lets go of the scratch file before its folder is removed


def build_recording(groups: list[ProblemResults], out: Path) -> list[tuple[str, str, int, Counter]]:
    """Write the recording of `groups` to `out`; returns (problem, device, candidates, verdicts) per run."""
    summary = []
    with tempfile.TemporaryDirectory(prefix="library-recording-") as folder, scratch_database(Path(folder)) as url:
        settings = get_settings()
        for group in groups:
            _, verdicts = record_problem(group, settings)
            summary.append((group.slug, group.device, len(group.lines), verdicts))
        out.parent.mkdir(parents=True, exist_ok=True)
        save_recording(url, out)
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="JSONL written by tests/test_verify_gpu.py "
                                                   "(REFINERY_LIBRARY_RESULTS)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"recording to write (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    groups = read_results(args.results)
    if not groups:
        parser.error(f"{args.results} holds no results")
    for group in groups:
        if group.replaced:
            print(f"# {group.slug}: {group.replaced} earlier result(s) superseded by a later line", flush=True)
    summary = build_recording(groups, args.out)
    for slug, device, count, verdicts in summary:
        counts = ", ".join(f"{n} {verdict}" for verdict, n in sorted(verdicts.items()))
        print(f"{slug:24s} {count:3d} candidates on {device} ({arch_for(device) or 'default arch'}): {counts}",
              flush=True)
    print(f"# {len(summary)} runs, {sum(s[2] for s in summary)} candidates → {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
