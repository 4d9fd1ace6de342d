"""On the device: how often the static coalescing and occupancy estimates agree with ncu, across the
shipped library, and how long ncu takes per candidate (target <= 10 s).

For each CUDA implementation: the static report at one configuration, then ncu (`--clock-control
none`, the fixed metric set, the candidate's own kernels only, one launch each) around
`python -m engine.analysis.profile.profile_target SLUG IMPL --config NAME`. Per kernel it compares
  * global load and store sectors per request: static loop-weighted estimate vs ncu's
    sectors / requests (agree: within 25 % or 1 sector);
  * theoretical occupancy: the static model vs ncu's sm__maximum_warps_per_active_cycle_pct
    (agree: within 1 percentage point); achieved occupancy is reported beside it.

Every candidate is compiled before ncu starts, as in a run (where verification compiles it first):
a C candidate's shared library is built into the cache, a Python candidate runs once unprofiled so
its NVRTC build is on disk. Built under ncu when it followed every child process, nvcc's dozen tools
each carried the profiler's injection and the build alone took 10-20 s of a 20-30 s profile on the
H200; ncu now watches only the candidate's own process. The JSON is rewritten after every candidate,
so a call cut short keeps what it measured; `--merge` adds several such files into one summary (no GPU).

    python benchmarks/ncu_agreement.py [--json $OUT/ncu_agreement.json] [--only SLUG ...] [--deadline S]
    python benchmarks/ncu_agreement.py --merge A.json B.json ... [--json merged.json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.analysis.profile import agreement  # noqa: E402 - after the path insert
from engine.analysis.profile.agreement import agree_occupancy, agree_sectors  # noqa: E402

TARGET_BYTES = 64e6  # profile the configuration whose minimum traffic is closest to this


def pick_config(problem):
    if problem.bytes_expr is None:
        return problem.configs[min(1, len(problem.configs) - 1)]
    return min(problem.configs, key=lambda c: abs((problem.min_bytes(c) or 0) - TARGET_BYTES))


def with_agreement(entry: dict) -> dict:
    """The entry with its three verdicts, static beside ncu (None where either side is missing)."""
    entry["ld_agree"] = agree_sectors(entry["static_ld"], entry["ncu_ld"])
    entry["st_agree"] = agree_sectors(entry["static_st"], entry["ncu_st"])
    entry["occupancy_agree"] = agree_occupancy(entry["static_occupancy"], entry["ncu_theoretical_occupancy"])
    return entry


def summarise_rows(device: str, covered: list[str], not_reached: list[str], rows: list[dict],
                   kernel_rows: list[dict]) -> dict:
    """Agreement shares and ncu times over the candidates profiled so far."""

    def rate(key: str) -> dict:
        decided = [r[key] for r in kernel_rows if r[key] is not None]
        return {"agree": sum(decided), "compared": len(decided),
                "share": sum(decided) / len(decided) if decided else None}

    times = [r["ncu_s"] for r in rows if "ncu_s" in r]
    return {
        "device": device, "problems": len(covered), "problems_not_reached": not_reached,
        "candidates": len(rows), "profiled": sum(1 for r in rows if r.get("ok")), "kernels_compared": len(kernel_rows),
        "load_sectors": rate("ld_agree"), "store_sectors": rate("st_agree"), "occupancy": rate("occupancy_agree"),
        "ncu_seconds_median": statistics.median(times) if times else None,
        "ncu_seconds_max": max(times) if times else None,
        "ncu_within_10s": sum(t <= 10 for t in times),
    }


_CANDIDATE_LINE = re.compile(r"^(?P<candidate>\S+/\S+)\s+ncu\s+(?P<s>[\d.]+) s (?P<outcome>.*)$")
_KERNEL_LINE = re.compile(r"^\s+(?P<kernel>\S+)\s+ld (?P<sld>\S+) vs (?P<nld>\S+)\s+st (?P<sst>\S+) vs (?P<nst>\S+)"
                          r"\s+occ (?P<socc>\S+) vs (?P<nocc>\S+)$")


def _number(text: str) -> float | None:
    return None if text == "None" else float(text)


def read_log(path: Path) -> dict:
    """A report rebuilt from the lines a run printed, for a run cut before it wrote its JSON (older
    versions wrote it only at the end). The device is read from the session log beside it."""
    session = path.with_name("session.log")
    device_line = session.read_text().splitlines()[1] if session.exists() else ""
    if not device_line:
        raise SystemExit(f"{path}: no session.log beside it to say which device measured it")
    rows, kernel_rows = [], []
    for line in path.read_text().splitlines():
        if match := _CANDIDATE_LINE.match(line):
            ok = match["outcome"] == "ok"
            rows.append({"candidate": match["candidate"], "ncu_s": float(match["s"]), "ok": ok,
                         "reason": "" if ok else match["outcome"], "from_log": True})
        elif (match := _KERNEL_LINE.match(line)) and rows:
            kernel_rows.append(with_agreement({
                "candidate": rows[-1]["candidate"], "kernel": match["kernel"],
                **{key: _number(match[group]) for key, group in (
                    ("static_ld", "sld"), ("ncu_ld", "nld"), ("static_st", "sst"), ("ncu_st", "nst"),
                    ("static_occupancy", "socc"), ("ncu_theoretical_occupancy", "nocc"))}}))
    return {"summary": {"device": device_line.split(",")[0].strip()}, "candidates": rows, "kernels": kernel_rows}


def merge(paths: list[Path]) -> dict:
    """One report from several runs (their JSON, or the log of a run cut before it wrote any); a
    candidate profiled in more than one keeps its latest row."""
    rows: dict[str, dict] = {}
    kernels: dict[str, list[dict]] = {}
    devices, covered = set(), []
    for path in paths:
        data = json.loads(path.read_text()) if path.suffix == ".json" else read_log(path)
        devices.add(data["summary"]["device"])
        for row in data["candidates"]:
            rows[row["candidate"]] = row
            kernels[row["candidate"]] = [k for k in data["kernels"] if k["candidate"] == row["candidate"]]
            slug = row["candidate"].split("/")[0]
            if slug not in covered:
                covered.append(slug)
    if len(devices) != 1:
        raise SystemExit(f"runs from different devices cannot be merged: {sorted(devices)}")
    kernel_rows = [k for candidate in rows for k in kernels[candidate]]
    summary = summarise_rows(devices.pop(), covered, [], list(rows.values()), kernel_rows)
    summary["merged_from"] = [str(p) for p in paths]
    return {"summary": summary, "candidates": list(rows.values()), "kernels": kernel_rows}


def restatic(report: dict, arch: str, cache_dir: Path | None = None) -> dict:
    """The report with every kernel's static side recomputed by the current code (no GPU): ncu's
    values stay as measured, so a change to the static model is judged against the same truth.
    Each candidate is analysed at the configuration the run profiled (`pick_config`, as recorded)."""
    from engine.analysis.static import analyse_candidate
    from engine.problems import get_problem

    by_candidate: dict[str, list[dict]] = {}
    for row in report["kernels"]:
        by_candidate.setdefault(row["candidate"], []).append(row)
    configs = {row["candidate"]: row.get("config") for row in report["candidates"]}
    for candidate, rows in by_candidate.items():
        slug, name = candidate.split("/", 1)
        problem = get_problem(slug)
        impl = problem.implementation(name)
        config = problem.config(configs[candidate]) if configs.get(candidate) else pick_config(problem)
        kernels = analyse_candidate(problem, impl.source, impl.language, config, arch=arch, cache_dir=cache_dir).kernels
        static = {k.name: k for k in kernels}
        for row in rows:
            row.update(agreement.static_estimates(static.get(row["kernel"]), arch))
            with_agreement(row)
    covered = list(dict.fromkeys(row["candidate"].split("/")[0] for row in report["candidates"]))
    summary = summarise_rows(report["summary"]["device"], covered, report["summary"].get("problems_not_reached", []),
                             report["candidates"], report["kernels"])
    summary.update({k: v for k, v in report["summary"].items() if k not in summary}, static_recomputed_for=arch)
    return {**report, "summary": summary}


def target_command(problem, impl, config) -> list[str]:
    return [sys.executable, "-m", "engine.analysis.profile.profile_target", problem.slug, impl.name,
            "--config", config.name]


def prebuild(problem, impl, config, settings) -> str | None:
    """Compile the candidate before ncu watches (None when it built), as a run's verification does first.

    A C candidate's shared library goes into the cache profile_target reads; a Python candidate runs
    once without the profiler, leaving its NVRTC/extension builds in their on-disk caches.
    """
    if problem.kind == "c":
        from engine.compilation.cuda import compile_shared_library

        build = compile_shared_library(impl.source, settings.gpu_arch, settings.cache_dir)
        return None if build.ok else f"build failed: {build.log[-300:]}"
    done = subprocess.run(target_command(problem, impl, config), capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    return None if done.returncode == 0 else f"the warm-up run failed: {done.stderr[-300:]}"


def prepare_target(problem, impl, config, arch: str, settings):
    """What profiling one implementation needs first: its static report, ncu's filter for its own
    kernels and their launches per call, and an error (no kernels, a failed build) when ncu cannot start."""
    from engine.analysis import analyse_candidate
    from engine.analysis.profile.dynamic import kernel_selection

    report = analyse_candidate(problem, impl.source, impl.language, config, arch=arch, cache_dir=settings.cache_dir)
    regex, launches = kernel_selection(report)
    error = "no kernels" if regex is None else prebuild(problem, impl, config, settings)
    return report, regex, launches, error


def selection(only: list[str] | None) -> tuple[list[str], dict[str, set[str]]]:
    """`--only` entries, SLUG or SLUG/IMPL: the problems in the order named, and per problem the
    implementations named (none named: all of them)."""
    slugs = list(dict.fromkeys(entry.split("/")[0] for entry in only or []))
    impls: dict[str, set[str]] = {}
    for entry in only or []:
        if "/" in entry:
            slug, name = entry.split("/", 1)
            impls.setdefault(slug, set()).add(name)
    return slugs, impls


def compare_kernels(candidate: str, report, profile, arch: str) -> list[dict]:
    """Per kernel of the static report that ncu saw: static estimate beside ncu's measurement."""
    summary = profile.summary()
    rows = agreement.compare_kernels(report, summary.per_kernel if summary else {}, arch)
    entries = []
    for row in rows:
        entries.append({"candidate": candidate, **row.to_json()})
        print(f"    {row.kernel:28s} ld {row.static_ld} vs {row.ncu_ld}  st {row.static_st} vs {row.ncu_st}  "
              f"occ {row.static_occupancy} vs {row.ncu_theoretical_occupancy}", flush=True)
    return entries


def write_report(path: Path | None, report: dict) -> None:
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2, default=str))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", nargs="*", default=None, help="problem slugs, or SLUG/IMPL for one implementation")
    parser.add_argument("--budget", type=float, default=60.0, help="ncu time limit per candidate (s)")
    parser.add_argument("--deadline", type=float, default=None,
                        help="start no new candidate after this many seconds (the summary says how far it got)")
    parser.add_argument("--merge", nargs="+", type=Path, default=None, help="earlier JSON reports to add up")
    parser.add_argument("--restatic", default=None, metavar="ARCH",
                        help="with --merge: recompute the static side for ARCH (e.g. sm_90) with the current code")
    options = parser.parse_args()
    if options.merge:
        merged = merge(options.merge)
        if options.restatic:
            merged = restatic(merged, options.restatic)
        print(json.dumps(merged["summary"], indent=2))
        write_report(options.json, merged)
        return
    started_all = time.perf_counter()

    import torch

    from engine.analysis import profile_command
    from engine.problems import scan_all
    from engine.settings import get_settings

    major, minor = torch.cuda.get_device_capability()
    arch = f"sm_{major}{minor}"
    device = torch.cuda.get_device_name(0)
    settings = get_settings()
    rows, kernel_rows = [], []
    slugs, named = selection(options.only)
    library = [p for p in scan_all().problems if not slugs or p.slug in slugs]
    if slugs:  # the order given is kept, so a run cut short has covered the problems named first
        library.sort(key=lambda p: slugs.index(p.slug))
    covered: list[str] = []

    def out_of_time() -> bool:
        return options.deadline is not None and time.perf_counter() - started_all > options.deadline

    def save() -> None:
        not_reached = [p.slug for p in library if p.slug not in covered]
        write_report(options.json, {"summary": summarise_rows(device, covered, not_reached, rows, kernel_rows),
                                    "candidates": rows, "kernels": kernel_rows})

    for problem in library:
        impls = [i for i in problem.implementations
                 if i.device == "cuda" and (problem.slug not in named or i.name in named[problem.slug])]
        if out_of_time():
            break
        config = pick_config(problem)
        for impl in impls:
            if out_of_time():
                break
            candidate = f"{problem.slug}/{impl.name}"
            report, regex, launches, error = prepare_target(problem, impl, config, arch, settings)
            if error:
                rows.append({"candidate": candidate, "error": error, "notes": report.notes})
                continue
            command = target_command(problem, impl, config)
            started = time.perf_counter()
            profile = profile_command(command, budget_s=options.budget, kernel_regex=regex,
                                      launch_count=launches, cwd=str(ROOT))
            seconds = time.perf_counter() - started
            row = {"candidate": candidate, "config": config.name, "ncu_s": seconds,
                   "ok": profile.ok, "reason": profile.reason, "missing_metrics": profile.missing_metrics}
            rows.append(row)
            print(f"{candidate:40s} ncu {seconds:6.1f} s {'ok' if profile.ok else profile.reason}", flush=True)
            if profile.ok:
                kernel_rows.extend(compare_kernels(candidate, report, profile, arch))
            save()
        else:
            covered.append(problem.slug)
            continue
        break  # cut inside a problem: it is not counted as covered

    not_reached = [p.slug for p in library if p.slug not in covered]
    print(json.dumps(summarise_rows(device, covered, not_reached, rows, kernel_rows), indent=2))
    save()


if __name__ == "__main__":
    main()
