"""The fast build of one load_inline extension, in the folder where torch has just written its sources
and its `build.ninja`: the same library (`<name>.so`, the same Python functions, the same device code),
built in a fraction of torch's time.

Routes, tried in order:
- merged: main.cpp and the host half of cuda.cu as one g++ unit on the shared precompiled header (torch's
  headers, and the deferred work they cause in every unit, once per candidate instead of twice), the
  device half through nvcc without torch's headers, in parallel, then torch's own link line;
- separate: main.cpp alone (exactly torch's unit, on the shared header) and the host half alone, where
  the merged unit does not compile or the two halves need different flags.
A failure of main.cpp alone is torch's failure too (`authoritative`); any other failure leaves the
decision to torch's own build, which the caller then runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from engine.untrusted.fastinline import pch
from engine.untrusted.fastinline.ninja import TorchBuild, UnsupportedBuild, read_build
from engine.untrusted.fastinline.split import LAUNCHER, CannotSplit, SplitSource, split_cuda

COMPILE_TIMEOUT_S = 600
_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Za-z_]\w*)", re.M)
_INCLUDES_EXTENSION = re.compile(r"^\s*#\s*include\s*[<\"]torch/extension\.h[>\"]", re.M)


@dataclass(frozen=True)
class Step:
    what: str
    seconds: float
    ok: bool


@dataclass(frozen=True)
class FastBuild:
    """What the fast build did: `route` is merged | separate | cpp-only, or "" where it did not build."""

    ok: bool
    route: str = ""
    reason: str = ""  # why it did not build (the cut's reason or the failing compiler's first lines)
    log: str = ""
    seconds: float = 0.0
    shared_header: bool = False
    authoritative: bool = False  # a failure torch's own build would report the same way
    steps: tuple[Step, ...] = field(default=())


class _Failed(Exception):
    def __init__(self, step: str, log: str) -> None:
        super().__init__(step)
        self.step, self.log = step, log


def _run(argv: list[str], steps: list[Step], what: str) -> str:
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        steps.append(Step(what, time.perf_counter() - started, False))
        raise _Failed(what, f"{what}: stopped after {COMPILE_TIMEOUT_S} s") from exc
    log = (done.stdout + done.stderr).strip()
    steps.append(Step(what, round(time.perf_counter() - started, 3), done.returncode == 0))
    if done.returncode != 0:
        raise _Failed(what, log)
    return log


def _flag_values(flags: tuple[str, ...], prefixes: tuple[str, ...]) -> list[str]:
    """Flags of the given kinds, joined with their separate argument (`-isystem DIR`)."""
    found, i = [], 0
    while i < len(flags):
        flag = flags[i]
        if flag in prefixes and i + 1 < len(flags):
            found.append(f"{flag} {flags[i + 1]}")
            i += 2
            continue
        if flag.startswith(prefixes) and flag not in prefixes:
            found.append(flag)
        i += 1
    return found


def _defines(flags: tuple[str, ...]) -> dict[str, str | None]:
    """-DNAME[=VALUE] and -UNAME as name → value (None: undefined)."""
    table: dict[str, str | None] = {}
    for item in _flag_values(flags, ("-D", "-U")):
        body = item[2:].strip()
        if item.startswith("-U"):
            table[body] = None
        else:
            name, _, value = body.partition("=")
            table[name] = value if "=" in body else "1"
    return table


def _host_half_flags(build: TorchBuild) -> tuple[str, ...] | None:
    """g++ flags for cuda.cu's host half, as nvcc's host compile would see them; None if they differ from
    main.cpp's in more than defines (then the halves are compiled apart)."""
    std = _flag_values(build.cuda_cflags, ("-std=",))
    includes = ("-I", "-isystem")
    if std != _flag_values(build.cflags, ("-std=",)) or \
            _flag_values(build.cuda_cflags, includes) != _flag_values(build.cflags, includes):
        return None
    return build.cflags


def _bridge(main_text: str, build: TorchBuild) -> str:
    """Between main.cpp and the host half in one unit: main.cpp's macros undone, nvcc's defines set."""
    lines = ['#line 1 "<between main.cpp and cuda.cu>"']
    lines += [f"#undef {name}" for name in dict.fromkeys(_DEFINE.findall(main_text))]
    main, cuda = _defines(build.cflags), _defines(build.cuda_cflags)
    for name, value in cuda.items():
        if name in main and main[name] == value:
            continue
        lines.append(f"#undef {name}" if value is None else f"#undef {name}\n#define {name} {value}")
    lines += [f"#undef {name}" for name in main if name not in cuda]
    return "\n".join(lines) + "\n"


def _separate_flags(build: TorchBuild) -> list[str]:
    """cuda.cu's host half compiled alone: the include, std and define flags nvcc passes to the host compiler."""
    kept = _flag_values(build.cuda_cflags, ("-I", "-isystem", "-std=", "-D", "-U"))
    return [*(part for item in kept for part in item.split(" ", 1)), "-fPIC"]


def _launcher_symbols(obj: Path, steps: list[Step]) -> list[str]:
    """The templated launchers the host object calls, demangled (`void __rf_launch_k<float>(…)`)."""
    listing = _run(["nm", "-P", "--undefined-only", str(obj)], steps, "nm")
    mangled = [line.split()[0] for line in listing.splitlines() if LAUNCHER in line and line.split()]
    if not mangled:
        return []
    done = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True, timeout=60)
    return [line for line in done.stdout.splitlines() if "<" in line]


class _Plan:
    def __init__(self, build: TorchBuild, pch_root: Path | None) -> None:
        self.build = build
        self.folder = build.folder
        self.steps: list[Step] = []
        self.header = pch.find_header(pch_root, build.cxx, build.host_flags())
        self.header_used = False

    def host_compile(self, source: Path, obj: Path, flags: tuple[str, ...] | list[str], what: str) -> None:
        with_header = self.header is not None and tuple(flags) == self.build.cflags
        argv = [*self.build.cxx, *flags, *(["-include", str(self.header), "-Winvalid-pch"] if with_header else []),
                "-c", str(source), "-o", str(obj)]
        log = _run(argv, self.steps, what)
        self.header_used = self.header_used or (with_header and pch.used(log))

    def device_compile(self, text: str) -> Path:
        source, obj = self.folder / "fast_device.cu", self.folder / "fast_device.o"
        source.write_text(text)
        _run([*self.build.nvcc, *self.build.cuda_cflags, "-c", str(source), "-o", str(obj)], self.steps, "device")
        return obj

    def link(self, objects: list[Path]) -> None:
        partial = self.build.library.with_name(f"{self.build.library.name}.{os.getpid()}.partial")
        _run([*self.build.cxx, *map(str, objects), *self.build.ldflags, "-o", str(partial)], self.steps, "link")
        partial.replace(self.build.library)

    def main_alone(self) -> Path:
        obj = self.folder / "fast_main.o"
        self.host_compile(self.build.cpp_source, obj, self.build.cflags, "main.cpp")
        return obj


def _build_split(plan: _Plan, split: SplitSource, main_text: str) -> str:
    build = plan.build
    merged_flags = _host_half_flags(build)
    merged = merged_flags is not None and _INCLUDES_EXTENSION.search(build.cuda_source.read_text()) is not None
    with ThreadPoolExecutor(max_workers=2) as pool:
        device = None if split.templated else pool.submit(plan.device_compile, split.device)
        host_objects: list[Path] = []
        route = "merged"
        try:
            if not merged:
                raise _Failed("merge", "the halves need different flags")
            source, obj = plan.folder / "fast_host.cpp", plan.folder / "fast_host.o"
            source.write_text(f'#line 1 "{build.cpp_source}"\n' + main_text + "\n" + _bridge(main_text, build) +
                              split.host)
            plan.host_compile(source, obj, merged_flags, "main.cpp + host half")
            host_objects = [obj]
        except _Failed as failed:
            if merged and str(build.cpp_source) not in failed.log and "<between" not in failed.log:
                raise  # an error of the host half alone: compiling it apart would fail the same way
            route = "separate"
            host_objects = [plan.main_alone()]  # raises: torch's main.cpp fails the same way
            source, obj = plan.folder / "fast_host.cpp", plan.folder / "fast_host.o"
            source.write_text(split.host)
            plan.host_compile(source, obj, _separate_flags(build), "host half")
            host_objects.append(obj)
        if split.templated:
            symbols = [s for o in host_objects for s in _launcher_symbols(o, plan.steps)]
            device = pool.submit(plan.device_compile, split.with_instantiations(symbols))
        device_object = device.result()
    plan.link([*host_objects, device_object])
    return route


def build_extension(folder: Path, pch_root: Path | None = None) -> FastBuild:
    """Build the library torch's `build.ninja` in `folder` describes, the fast way. Never raises."""
    started = time.perf_counter()
    try:
        build = read_build(Path(folder))
    except (OSError, UnsupportedBuild) as exc:
        return FastBuild(False, reason=f"build file: {exc}")
    plan = _Plan(build, pch_root)
    main_text = build.cpp_source.read_text()
    try:
        if build.cuda_source is None:
            plan.link([plan.main_alone()])
            route = "cpp-only"
        else:
            split = split_cuda(build.cuda_source.read_text(), str(build.cuda_source))
            route = _build_split(plan, split, main_text)
    except CannotSplit as exc:
        return FastBuild(False, reason=f"not split: {exc}", seconds=time.perf_counter() - started,
                         steps=tuple(plan.steps))
    except (OSError, ImportError, ValueError, RuntimeError) as exc:  # torch's build decides instead
        return FastBuild(False, reason=f"{type(exc).__name__}: {exc}"[:300], seconds=time.perf_counter() - started,
                         steps=tuple(plan.steps))
    except _Failed as exc:
        lines = [ln for ln in exc.log.splitlines() if ln.strip()]
        return FastBuild(False, reason=f"{exc.step} failed: {lines[0] if lines else ''}"[:300], log=exc.log,
                         seconds=time.perf_counter() - started, shared_header=plan.header_used,
                         authoritative=exc.step == "main.cpp", steps=tuple(plan.steps))
    return FastBuild(True, route, seconds=time.perf_counter() - started, shared_header=plan.header_used,
                     steps=tuple(plan.steps))
