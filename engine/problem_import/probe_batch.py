"""Probes many imported PyTorch files at their configurations in one warm sandbox.

Importing torch costs seconds; a KernelBench level is a hundred files. So one sandboxed server
(`engine.untrusted.probe.serve`) imports torch once and forks a child per file; here we feed it a
file per free core and collect the answers. Each file has its own time limit, which the server enforces
by killing that child; memory and processes are bounded for the whole job by the sandbox's JobLimits.
Should the server itself die or fall silent (a file that kills its parent), it is restarted and the
files it was working on are tried once more; a file that was in flight twice is blamed.

Files of one import share a server: they come from one user at one time, and a file can at most spoil
its batch-mates' answers, never reach past the sandbox. Messages name the user's file and the
configuration, never our copies.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from engine.problems.model import Config, Signature
from engine.sandbox import scratch as scratch_folders
from engine.sandbox.output import Bounded, Drain

PROBE_TIMEOUT_S = 120.0
PROBE_MEMORY_MB = 8192
START_TIMEOUT_S = 180.0
SILENCE_GRACE_S = 30.0  # past a file's own limit: the server should have answered by then
ATTEMPTS = 2
REPLY_BYTES = 64 << 20  # one reply line at most: a server printing more without a newline is treated as dead


@dataclass(frozen=True)
class ProbeRequest:
    """One file and the configurations to run it at, in order (the file's own sizes first)."""

    key: str
    path: Path  # the user's file: named in messages and tracebacks
    source: str
    configs: tuple[Config, ...]


@dataclass(frozen=True)
class ConfigOutcome:
    name: str
    signature: Signature | None = None
    error: str | None = None  # one line: the stage and the cause

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class FileOutcome:
    """A file's answers; `error` when the file as a whole failed (a missing module, a timeout, a crash)."""

    key: str
    configs: tuple[ConfigOutcome, ...] = ()
    error: str | None = None

    def config(self, name: str) -> ConfigOutcome | None:
        return next((c for c in self.configs if c.name == name), None)


def _outcome(key: str, reply: dict) -> FileOutcome:
    configs = []
    for item in reply.get("configs", ()):
        if item.get("ok"):
            configs.append(ConfigOutcome(item["name"], Signature.from_json(item)))
        else:
            configs.append(ConfigOutcome(item["name"], error=str(item.get("error", "failed"))))
    error = reply.get("error")
    fatal = next((c for c in reply.get("configs", ()) if c.get("fatal")), None)
    if error is None and fatal is not None:
        error = str(fatal["error"])
    return FileOutcome(key, tuple(configs), error)


@dataclass
class _Server:
    job: object
    folder: Path
    cpus: int
    buffer: bytes = b""
    in_flight: dict[str, float] = field(default_factory=dict)  # key -> when sent

    log: Drain | None = None  # the server's stderr: head and tail, in memory

    def stderr_tail(self) -> str:
        lines = self.log.buffer.text().strip().splitlines() if self.log is not None else []
        return " | ".join(ln.strip() for ln in lines[-3:])[-500:]


class ProbeSession:
    """A warm probe server, started on first use and ended with the session (a context manager)."""

    def __init__(self, timeout_s: float = PROBE_TIMEOUT_S, memory_mb: int = PROBE_MEMORY_MB) -> None:
        self.timeout_s, self.memory_mb = float(timeout_s), int(memory_mb)
        self.server: _Server | None = None
        self.started_servers = 0
        self.cpu_s = 0.0  # CPU seconds the servers reported: their start-up and every probe

    def __enter__(self) -> ProbeSession:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.server is not None:
            self._stop(self.server)
            self.server = None

    def _stop(self, server: _Server) -> None:
        with contextlib.suppress(OSError):
            server.job.popen.stdin.close()
        server.job.close()
        if server.log is not None:
            server.log.join(5.0)
        scratch_folders.remove(server.folder)

    def _start(self) -> _Server:
        from engine.sandbox import JobLimits, SandboxSpec, boundary, spawn
        from engine.sandbox.programs import UNTRUSTED_PACKAGES, hidden_roots, mounts_for, python_env

        where = boundary()
        limits = JobLimits(memory_mb=self.memory_mb, processes=256, cpu_seconds=int(self.timeout_s) * 2 + 120)
        folder = scratch_folders.make("probe-server", quota_mb=limits.scratch_mb)
        spec = SandboxSpec(argv=[sys.executable, "-m", "engine.untrusted.probe", "--serve",
                                 str(self.memory_mb)], scratch=folder, hidden=hidden_roots(), role="probe",
                           limits=limits)
        spec.mounts = mounts_for(UNTRUSTED_PACKAGES, where)
        spec.env = python_env(UNTRUSTED_PACKAGES, where, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")
        try:
            job = spawn(spec, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, where=where)
        except BaseException:
            scratch_folders.remove(folder)
            raise
        self.started_servers += 1
        server = _Server(job, folder, cpus=1, log=Drain.of(job.popen.stderr, Bounded(), name="probe-server-log"))
        ready = self._read_line(server, time.monotonic() + START_TIMEOUT_S)
        if ready is None or not ready.get("ready"):
            detail = job.exit_detail() if job.poll() is not None else "no answer"
            tail = server.stderr_tail()
            self._stop(server)
            raise RuntimeError(f"the probe sandbox did not start ({detail})" + (f": {tail}" if tail else ""))
        server.cpus = max(1, int(ready.get("cpus", 1)))
        self.cpu_s += float(ready.get("cpu_s", 0.0))
        return server

    def _read_line(self, server: _Server, deadline: float) -> dict | None:
        """The server's next reply, or None if it died or stayed silent until `deadline`."""
        out = server.job.popen.stdout
        while b"\n" not in server.buffer:
            wait = deadline - time.monotonic()
            if wait <= 0:
                return None
            ready, _, _ = select.select([out], [], [], min(wait, 1.0))
            if not ready:
                continue
            chunk = os.read(out.fileno(), 1 << 20)
            if not chunk or len(server.buffer) + len(chunk) > REPLY_BYTES:  # a reply past any honest size: broken
                return None
            server.buffer += chunk
        line, server.buffer = server.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return {}

    def _send(self, server: _Server, request: ProbeRequest, threads: int) -> None:
        message = {"id": request.key, "filename": str(request.path), "source": request.source,
                   "configs": [{"name": c.name, "params": dict(c.params)} for c in request.configs],
                   "timeout_s": self.timeout_s, "threads": threads}
        server.job.popen.stdin.write((json.dumps(message) + "\n").encode())
        server.job.popen.stdin.flush()
        server.in_flight[request.key] = time.monotonic()

    def probe(self, requests: list[ProbeRequest]) -> dict[str, FileOutcome]:
        """Every request's outcome by key; never raises for a file's fault."""
        pending = list(requests)
        by_key = {r.key: r for r in requests}
        attempts: dict[str, int] = {}
        results: dict[str, FileOutcome] = {}
        while pending or (self.server is not None and self.server.in_flight):
            if self.server is None:
                try:
                    self.server = self._start()
                except RuntimeError as exc:
                    for request in pending:
                        results[request.key] = FileOutcome(request.key, error=str(exc))
                    return results
            server = self.server
            try:
                while pending and len(server.in_flight) < server.cpus:
                    # A file tried again goes alone, so a file that kills the server blames no other.
                    retry = attempts.get(pending[0].key, 0) > 0
                    if any(attempts.get(k, 0) for k in server.in_flight) or (retry and server.in_flight):
                        break
                    # A lone file (an upload) may use every core for a real CPU run; a batch, one each.
                    threads = max(1, server.cpus // min(server.cpus, len(pending) + len(server.in_flight)))
                    self._send(server, pending.pop(0), threads)
            except OSError:
                pass  # the server is gone: found out below
            deadline = min(server.in_flight.values(), default=time.monotonic()) + self.timeout_s + SILENCE_GRACE_S
            reply = self._read_line(server, deadline) if server.in_flight else None
            if reply is not None and reply.get("id") in server.in_flight:
                key = reply["id"]
                self.cpu_s += float(reply.get("cpu_s", 0.0))
                del server.in_flight[key]
                results[key] = _outcome(key, reply)
                continue
            if reply is not None:
                continue
            # Dead or silent: every file in flight is tried again in a fresh server, up to ATTEMPTS.
            detail = server.job.exit_detail() if server.job.poll() is not None else "stopped answering"
            for key in list(server.in_flight):
                attempts[key] = attempts.get(key, 0) + 1
                if attempts[key] >= ATTEMPTS:
                    results[key] = FileOutcome(key, error=f"the probe process died while probing it ({detail})")
                else:
                    pending.insert(0, by_key[key])
            self._stop(server)
            self.server = None
        return results
