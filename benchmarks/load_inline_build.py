"""KernelBench `load_inline` builds, torch's way and the fast way, on the same candidates in the same run.

Each of N candidates (the varied set in tests/fixtures/load_inline, cycled, each copy made distinct so no
build is reused) is built by the verifier's prebuild program (`engine.untrusted.fastinline.prebuild`, outside
its sandbox) in a fresh process, JOBS at once: once with torch's own load_inline build (`--torch`), once
with the fast build (on shared precompiled headers warmed first; their one-time cost is reported apart).
Then, on a GPU, each candidate is loaded from each build in a fresh process and run on the same inputs:
the outputs must be bitwise equal, the Python-visible functions the same, and the kernels' SASS
(cuobjdump) the same.

    python benchmarks/load_inline_build.py [--candidates 8] [--jobs 16] [--arch-list 9.0a] [--out FILE]

Targets (issue #19): fast median <= 15 s per candidate on the H200 machine with 16 building at once,
>= 4x faster than torch's build, identical results. JSON goes to --out, or $OUT/load_inline_build.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
FIXTURES = REPO / "tests" / "fixtures" / "load_inline"
_NAME = re.compile(r'name="([A-Za-z_]\w*)"')


@dataclass
class BuildTime:
    candidate: str
    way: str  # torch | fast
    ok: bool
    process_seconds: float  # the whole prebuild process: Python, torch, the build
    build_seconds: float  # the build steps alone (torch's ninja, or the fast build)
    path: str = ""  # which build made it: fast | torch
    route: str = ""
    shared_header: bool = False
    reason: str = ""


@dataclass
class Check:
    candidate: str
    same_outputs: bool | None = None
    same_functions: bool | None = None
    same_sass: bool | None = None
    detail: str = ""


@dataclass
class Report:
    jobs: int
    candidates: int
    arch_list: str
    load_before: list[float]
    header_seconds: float
    torch: list[BuildTime] = field(default_factory=list)
    fast: list[BuildTime] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    summary: dict = field(default_factory=dict)


def candidate_sources(count: int) -> list[tuple[str, str]]:
    """`count` distinct candidates: the fixtures in turn, the k-th copy renamed and commented."""
    fixtures = sorted(p for p in FIXTURES.glob("*.py") if not p.name.startswith(("broken_", "outside_")))
    out = []
    for i in range(count):
        path = fixtures[i % len(fixtures)]
        text = _NAME.sub(rf'name="\g<1>_{i}"', path.read_text())
        text = text.replace('r"""\n', f'r"""\n// benchmark copy {i}\n', 1)
        out.append((f"{path.stem}_{i}", text))
    return out


def _env(ext: Path, arch_list: str) -> dict[str, str]:
    """The prebuild's environment (its PATH: the CUDA wheels' tools first), without its sandbox."""
    from engine.sandbox.programs import tool_path

    path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    # The sandbox's environment is an allow-list without CC/CXX: torch uses `c++` there, and so here.
    inherited = {k: v for k, v in os.environ.items() if k not in ("CC", "CXX")}
    return dict(inherited, TORCH_EXTENSIONS_DIR=str(ext), TORCH_CUDA_ARCH_LIST=arch_list, CUDA_VISIBLE_DEVICES="",
                MAX_JOBS=str(os.cpu_count() or 1), PYTHONPATH=path, PATH=tool_path())


def build_one(name: str, source: str, way: str, work: Path, arch_list: str, pch: Path) -> BuildTime:
    folder = work / way / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "candidate.py").write_text(source)
    ext = folder / "ext"
    argv = [sys.executable, "-m", "engine.untrusted.fastinline.prebuild", str(folder / "candidate.py")]
    argv += ["--pch", str(pch)] if way == "fast" else ["--torch"]
    started = time.perf_counter()
    done = subprocess.run(argv, env=_env(ext, arch_list), capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    (folder / "prebuild.log").write_text(done.stdout + done.stderr)
    records = [json.loads(line) for line in (ext / "builds.jsonl").read_text().splitlines()] \
        if (ext / "builds.jsonl").exists() else []
    ok = done.returncode == 0 and bool(records) and all(r["ok"] for r in records)
    return BuildTime(name, way, ok, round(seconds, 2), round(sum(r["seconds"] for r in records), 2),
                     ",".join(r["path"] for r in records), ",".join(r["route"] for r in records),
                     all(r["shared_header"] for r in records) if records else False,
                     "; ".join(r["reason"] for r in records if r["reason"] and r["reason"] != "off")[:300])


def build_all(sources: list[tuple[str, str]], way: str, work: Path, arch_list: str, pch: Path,
              jobs: int) -> list[BuildTime]:
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda item: build_one(*item, way, work, arch_list, pch), sources))


# --- on the GPU: the same outputs, functions and device code ---------------------------------------------

CHILD = r"""
import json, sys, types, torch
from engine.untrusted.runner import prebuilt
prebuilt.install()
path, out = sys.argv[1], sys.argv[2]
module = types.ModuleType("candidate"); module.__file__ = path
exec(compile(open(path).read(), path, "exec"), module.__dict__)
torch.manual_seed(0)
inputs = [x.cuda() if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
model = module.ModelNew().cuda()
with torch.no_grad():
    result = model(*inputs)
torch.cuda.synchronize()
result = list(result) if isinstance(result, (list, tuple)) else [result]
extensions = {k: sorted(n for n in dir(v) if not n.startswith("_")) for k, v in vars(module).items()
              if isinstance(v, types.ModuleType) and str(getattr(v, "__file__", "")).endswith(".so")}
torch.save({"outputs": [r.cpu() for r in result], "functions": extensions}, out)
"""


def run_on_gpu(folder: Path, arch_list: str) -> Path:
    out = folder / "outputs.pt"
    env = _env(folder / "ext", arch_list)
    env.pop("CUDA_VISIBLE_DEVICES")
    done = subprocess.run([sys.executable, "-c", CHILD, str(folder / "candidate.py"), str(out)], env=env,
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return out


def sass_by_function(library: Path) -> dict[str, list[str]]:
    """Each kernel's SASS, instruction text only (addresses and encodings differ between binaries)."""
    from engine.toolchain import require_tool, tool_env

    listing = subprocess.run([str(require_tool("cuobjdump")), "-sass", str(library)], capture_output=True,
                             text=True, env=tool_env(), timeout=300).stdout
    functions: dict[str, list[str]] = {}
    current = None
    for line in listing.splitlines():
        match = re.search(r"Function : (\S+)", line)
        if match:
            current = functions.setdefault(match.group(1), [])
        elif current is not None:
            instruction = re.search(r"/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;", line)
            if instruction:
                current.append(instruction.group(1))
    return functions


def check_one(name: str, work: Path, arch_list: str) -> Check:
    import torch

    check = Check(name)
    try:
        torch_out = torch.load(run_on_gpu(work / "torch" / name, arch_list))
        fast_out = torch.load(run_on_gpu(work / "fast" / name, arch_list))
        check.same_outputs = len(torch_out["outputs"]) == len(fast_out["outputs"]) and all(
            torch.equal(a, b) for a, b in zip(torch_out["outputs"], fast_out["outputs"], strict=True))
        check.same_functions = torch_out["functions"] == fast_out["functions"]
    except RuntimeError as exc:
        check.detail = str(exc)[-500:]
    libraries = {way: sorted((work / way / name / "ext").glob("*/*.so")) for way in ("torch", "fast")}
    if libraries["torch"] and len(libraries["torch"]) == len(libraries["fast"]):
        same = True
        for a, b in zip(libraries["torch"], libraries["fast"], strict=True):
            theirs, ours = sass_by_function(a), sass_by_function(b)
            # every kernel of ours is torch's, instruction for instruction; torch's headers may add functions
            same = same and bool(ours) and all(theirs.get(name) == code for name, code in ours.items())
            extra = sorted(set(theirs) - set(ours))
            if extra:
                check.detail += f" torch's library also has {extra[:4]}"
        check.same_sass = same
    return check


def summarize(report: Report) -> dict:
    def median(rows: list[BuildTime], attr: str) -> float | None:
        values = [getattr(r, attr) for r in rows if r.ok]
        return round(statistics.median(values), 2) if values else None

    out = {way: {"ok": sum(r.ok for r in rows), "fast_path": sum("torch" not in r.path for r in rows if r.ok),
                 "median_process_s": median(rows, "process_seconds"),
                 "median_build_s": median(rows, "build_seconds")}
           for way, rows in (("torch", report.torch), ("fast", report.fast))}
    for key in ("median_process_s", "median_build_s"):
        if out["torch"][key] and out["fast"][key]:
            ratio = out["torch"][key] / out["fast"][key]
            out[f"ratio_{key.removeprefix('median_').removesuffix('_s')}"] = round(ratio, 2)
    if report.checks:
        out["identical"] = {k: sum(bool(getattr(c, k)) for c in report.checks) for k in
                            ("same_outputs", "same_functions", "same_sass")}
        out["checked"] = len(report.checks)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=16)
    parser.add_argument("--arch-list", default=os.environ.get("TORCH_CUDA_ARCH_LIST", "9.0"))
    parser.add_argument("--ways", default="torch,fast")
    parser.add_argument("--no-gpu-check", action="store_true")
    parser.add_argument("--work", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    from engine.compilation.inline import load_inline_extras
    from engine.compilation.shared_header import ensure_header

    work = args.work or Path(tempfile.mkdtemp(prefix="load-inline-bench-"))
    pch = work / "pch"
    sources = candidate_sources(args.candidates)
    report = Report(args.jobs, len(sources), args.arch_list, [round(x, 2) for x in os.getloadavg()], 0.0)
    started = time.perf_counter()
    extras = dict.fromkeys(e for _, s in sources for e in load_inline_extras(s))
    with ThreadPoolExecutor(max_workers=max(1, len(extras))) as pool:
        headers = list(pool.map(lambda extra: ensure_header(pch, *extra), extras))
    for (cflags, _), header in zip(extras, headers, strict=True):
        print(f"shared header {list(cflags)}: {'ok' if header.ok else 'FAILED ' + header.log[-300:]} "
              f"({header.seconds:.1f} s)", flush=True)
    report.header_seconds = round(time.perf_counter() - started, 2)
    for way in args.ways.split(","):
        rows = build_all(sources, way, work, args.arch_list, pch, args.jobs)
        setattr(report, way, rows)
        for row in rows:
            print(f"{way:5} {row.candidate:28} {'ok ' if row.ok else 'FAIL'} process {row.process_seconds:7.1f} s "
                  f"build {row.build_seconds:7.1f} s  {row.path} {row.route} {row.reason[:100]}", flush=True)
    gpu = shutil.which("nvidia-smi") is not None and not args.no_gpu_check
    if gpu and report.torch and report.fast:
        with ThreadPoolExecutor(max_workers=4) as pool:
            report.checks = list(pool.map(lambda s: check_one(s[0], work, args.arch_list), sources))
        for check in report.checks:
            print(f"check {check.candidate:28} outputs {check.same_outputs} functions {check.same_functions} "
                  f"sass {check.same_sass} {check.detail[:200]}", flush=True)
    report.summary = summarize(report)
    print(json.dumps(report.summary, indent=1))
    out = args.out or (Path(os.environ["OUT"]) / "load_inline_build.json" if os.environ.get("OUT") else None)
    if out is not None:
        out.write_text(json.dumps(asdict(report), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
