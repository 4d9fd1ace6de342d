"""Keeping the shared precompiled headers: built once per flag set, ahead of the builds that use them.

`ensure_header` is called by the trusted side (before a candidate's prebuild, or when a pool warms up):
it returns at once when the header for those extra flags exists, else builds it in a sandboxed
`engine.untrusted.fastinline.pch_job` (no candidate code runs there) into a staging folder and renames
it into place, under a lock so that sixteen candidates asking at once build it once. Builds see the root
read-only.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.compilation.cuda import torch_version
from engine.untrusted.fastinline.pch import HEADER

PCH_TIMEOUT_S = 900
STAGING_INSIDE = "/refinery/pch-out"
COMMON_EXTRAS: tuple[tuple[str, ...], ...] = ((), ("-O3",))  # what nearly every KernelBench candidate passes


@dataclass(frozen=True)
class HeaderResult:
    ok: bool
    key: str
    built: bool  # False: it was there already
    seconds: float
    log: str = ""


def _extras_id(extra_cflags: Sequence[str], extra_include_paths: Sequence[str]) -> str:
    digest = hashlib.sha256(json.dumps([torch_version(), sys.executable, [f.strip() for f in extra_cflags if f.strip()],
                                        list(extra_include_paths)]).encode())
    return digest.hexdigest()[:24]


def _known(root: Path, extras: str) -> str | None:
    index = root / "by-extras" / f"{extras}.json"
    try:
        key = json.loads(index.read_text())["key"]
    except (OSError, ValueError, KeyError):
        return None
    return key if (root / key / f"{HEADER}.gch").exists() else None


def ensure_header(root: Path, extra_cflags: Sequence[str] = (), extra_include_paths: Sequence[str] = (),
                  timeout_s: float = PCH_TIMEOUT_S) -> HeaderResult:
    """The shared header for main.cpp's flags with these extras, built now if it is missing."""
    root = Path(root)
    (root / "by-extras").mkdir(parents=True, exist_ok=True)
    extras = _extras_id(extra_cflags, extra_include_paths)
    key = _known(root, extras)
    if key is not None:
        return HeaderResult(True, key, False, 0.0)
    with open(root / f".lock-{extras}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        key = _known(root, extras)
        if key is not None:
            return HeaderResult(True, key, False, 0.0)
        return _build(root, extras, extra_cflags, extra_include_paths, timeout_s)


def warm_headers(root: Path, variants: Sequence[Sequence[str]] = COMMON_EXTRAS) -> list[HeaderResult]:
    """Build the headers of the usual extra flags ahead of any candidate (a pool's start-up)."""
    return [ensure_header(root, extras) for extras in variants]


def _build(root: Path, extras: str, extra_cflags: Sequence[str], extra_include_paths: Sequence[str],
           timeout_s: float) -> HeaderResult:
    from engine.sandbox import JobLimits, Mount, SandboxSpec, boundary, run
    from engine.sandbox import scratch as scratch_folders
    from engine.sandbox.programs import UNTRUSTED_PACKAGES, hidden_roots, mounts_for, python_env

    where = boundary()
    staging = Path(tempfile.mkdtemp(prefix="staging-", dir=root))
    limits = JobLimits(memory_mb=8192, processes=64, cpu_seconds=int(timeout_s), file_size_mb=4096)
    scratch = scratch_folders.make("pch-job", quota_mb=limits.scratch_mb)
    started = time.perf_counter()
    try:
        out = STAGING_INSIDE if where.namespaced else str(staging)
        spec = SandboxSpec(
            argv=[sys.executable, "-m", "engine.untrusted.fastinline.pch_job", out,
                  "--extra-cflags", json.dumps(list(extra_cflags)),
                  "--extra-include-paths", json.dumps(list(extra_include_paths))],
            scratch=scratch, hidden=hidden_roots(), role="build",
            limits=limits,
            mounts=[*mounts_for(UNTRUSTED_PACKAGES, where)] + (
                [Mount(staging, STAGING_INSIDE, writable=True)] if where.namespaced else []),
            env=python_env(UNTRUSTED_PACKAGES, where))
        done = run(spec, timeout_s=timeout_s)
        log = (done.stdout + done.stderr).decode("utf-8", "replace")
        report = next((json.loads(line) for line in reversed(log.splitlines()) if line.startswith("{")), None)
        if done.returncode != 0 or report is None or not report.get("ok"):
            detail = report.get("log", "") if report else log[-4000:]
            return HeaderResult(False, "", False, time.perf_counter() - started, f"{done.detail}\n{detail}".strip())
        key = report["key"]
        target = root / key
        if not (target / f"{HEADER}.gch").exists():
            shutil.rmtree(target, ignore_errors=True)
            (staging / key).replace(target)
        index = root / "by-extras" / f"{extras}.json"
        partial = index.with_suffix(".partial")
        partial.write_text(json.dumps({"key": key, "extra_cflags": list(extra_cflags),
                                       "extra_include_paths": list(extra_include_paths)}))
        partial.replace(index)
        return HeaderResult(True, key, True, time.perf_counter() - started)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        scratch_folders.remove(scratch)
