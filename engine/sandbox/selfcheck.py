"""The boundary's self-check: what a sandboxed runner and a problem probe can and cannot see and do, observed
from inside by a small probe and decided outside.

The probe only reports what it saw (its environment's names, which planted paths it could read or write,
whether it reached a listener of ours on the host's loopback, how many processes it sees, its user, whether
the kernel let it trace or make namespaces, its scratch folder's size); `checks` turns that into findings,
here, where the probe cannot reach. `refinery sandbox` prints them; the tests run them on every machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import sys
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

PROBE = r'''
import ctypes, json, os, socket, sys
plan = json.loads(sys.argv[1])
seen = {"env": sorted(os.environ), "uid": os.getuid(), "pid": os.getpid(), "read": {}, "wrote": {}}
for path in plan["unreadable"]:
    try:
        seen["read"][path] = bool(os.listdir(path)) if os.path.isdir(path) else len(open(path, "rb").read(64)) > 0
    except OSError:
        seen["read"][path] = False
for folder in plan["unwritable"]:
    try:
        with open(os.path.join(folder, plan["marker"]), "w") as out:
            out.write("x")
        seen["wrote"][folder] = True
    except OSError:
        seen["wrote"][folder] = False
try:
    sock = socket.socket()
    sock.settimeout(1.0)
    sock.connect(("127.0.0.1", plan["port"]))
    seen["network"] = True
except OSError:
    seen["network"] = False
seen["processes"] = sum(1 for entry in os.listdir("/proc") if entry.isdigit())
seen["parent_visible"] = os.path.exists(f"/proc/{plan['parent']}")
libc = ctypes.CDLL(None, use_errno=True)
seen["trace"] = libc.ptrace(0, 0, None, None) == 0  # PTRACE_TRACEME
seen["new_namespace"] = libc.unshare(0x10000000) == 0  # CLONE_NEWUSER
stats = os.statvfs(os.getcwd())
seen["scratch_bytes"] = stats.f_blocks * stats.f_frsize
print(json.dumps(seen))
'''


@dataclass(frozen=True)
class Finding:
    who: str  # which sandboxed program: "runner" or "problem probe"
    check: str
    ok: bool
    observed: str


def checks(who: str, seen: dict, plan: dict, quota_bytes: int | None) -> list[Finding]:
    """Findings from what the probe saw; every one must be ok for the boundary to hold."""
    leaked = [name for name in seen.get("env", []) if name in plan["secrets"]]
    read = [path for path, ok in seen.get("read", {}).items() if ok]
    wrote = [path for path, ok in seen.get("wrote", {}).items() if ok]
    found = [
        Finding(who, "no secret in its environment", not leaked, ", ".join(leaked) or
                f"{len(seen.get('env', []))} variables, none planted"),
        Finding(who, "the data folder and the repository are invisible", not read, ", ".join(read) or
                f"{len(plan['unreadable'])} planted paths unreadable"),
        Finding(who, "writes land only in its scratch folder", not wrote, ", ".join(wrote) or
                f"{len(plan['unwritable'])} folders refused a write"),
        Finding(who, "no network, not even the host's loopback", not seen.get("network", True),
                "connected to a listener of ours" if seen.get("network", True) else "connection refused"),
        Finding(who, "other processes are invisible", not seen.get("parent_visible", True)
                and seen.get("processes", 99) < 16, f"{seen.get('processes')} processes seen"),
        Finding(who, "runs as an unprivileged user of its own", seen.get("uid", 0) not in (0, os.getuid()),
                f"uid {seen.get('uid')}"),
        Finding(who, "tracing and new namespaces are refused", not seen.get("trace", True)
                and not seen.get("new_namespace", True),
                f"ptrace {'allowed' if seen.get('trace') else 'refused'}, unshare "
                f"{'allowed' if seen.get('new_namespace') else 'refused'}"),
    ]
    if quota_bytes:
        size = int(seen.get("scratch_bytes", 0) or 0)
        found.append(Finding(who, "its scratch folder has a quota", 0 < size <= quota_bytes * 1.05,
                             f"{size / 2**20:.0f} MiB (quota {quota_bytes / 2**20:.0f} MiB)"))
    return found


def run_self_check(data_folder: Path | None = None, timeout_s: float = 60.0) -> list[Finding]:
    """Start a probe as the runner and as a problem probe are started, and check what each saw."""
    from engine.sandbox import JobLimits, SandboxSpec, boundary, run
    from engine.sandbox import scratch as scratch_folders
    from engine.sandbox.programs import REPO_ROOT, UNTRUSTED_PACKAGES, hidden_roots, mounts_for, python_env

    where = boundary()
    secret = f"REFINERY_SELFCHECK_KEY_{uuid.uuid4().hex[:8]}"
    os.environ[secret] = uuid.uuid4().hex
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    outside = Path(tempfile.mkdtemp(prefix="selfcheck-outside-"))
    outside.chmod(0o777)  # writable by anyone: only the boundary keeps a job out
    hidden = [Path(data_folder)] if data_folder else []
    plan = {"secrets": [secret, "OPENAI_API_KEY", "REFINERY_TEAM_PASSWORD", "PGPASSWORD"],
            "unreadable": [str(p) for p in (*hidden, REPO_ROOT / "tests", REPO_ROOT / ".git", REPO_ROOT / "assets")
                           if p.exists()],
            "unwritable": [str(outside), "/", "/usr", str(REPO_ROOT)], "marker": f"selfcheck-{uuid.uuid4().hex[:8]}",
            "port": listener.getsockname()[1], "parent": os.getpid()}
    findings: list[Finding] = []
    try:
        for who in ("runner", "problem probe"):
            limits = JobLimits(memory_mb=2048, processes=64, cpu_seconds=int(timeout_s))
            folder = scratch_folders.make(who.replace(" ", "-"), quota_mb=limits.scratch_mb)
            try:
                (folder / "probe.py").write_text(PROBE)
                spec = SandboxSpec(argv=[sys.executable, "probe.py", json.dumps(plan)], scratch=folder,
                                   hidden=hidden_roots(*hidden), role=who.replace(" ", "-"), limits=limits,
                                   mounts=mounts_for(UNTRUSTED_PACKAGES, where),
                                   env=python_env(UNTRUSTED_PACKAGES, where, **({"CUDA_VISIBLE_DEVICES": ""}
                                                                          if who != "runner" else {})))
                done = run(spec, timeout_s=timeout_s)
                lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
                seen = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None
            finally:
                scratch_folders.remove(folder)
            if seen is None:
                findings.append(Finding(who, "the probe ran", False, (done.detail or "no report")[:300]))
                continue
            quota_held = where.namespaced and scratch_folders.quota_available() is None
            quota = limits.scratch_mb * 2**20 if quota_held else None
            findings += checks(who, seen, plan, quota)
    finally:
        os.environ.pop(secret, None)
        listener.close()
        remove_markers(plan)
        shutil.rmtree(outside, ignore_errors=True)
    return findings


def remove_markers(plan: dict) -> None:
    """Remove the file a probe's write left in each folder it should not reach. The finding reports the write;
    the file itself must not stay: without namespaces the probe is this process's own user, and as root its
    write lands in the host's `/`, `/usr` and the repository (a name the probe drew at random, so nothing else
    has it)."""
    for folder in plan["unwritable"]:
        with contextlib.suppress(OSError):  # FileNotFoundError: the write was refused, as it should be
            (Path(folder) / plan["marker"]).unlink()
