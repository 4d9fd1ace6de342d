"""The worker pool: long-lived sandboxed worker processes, one per GPU (or CPU slot), fed jobs over pipes.

The parent owns the clock: every job has a hard wall-clock timeout, after which the worker's whole
process group is killed and the job's verdict is `timeout`. A worker that crashes (segfault,
SIGXCPU, OOM kill) or reports its state untrustworthy (sticky CUDA error, monkeypatch) is replaced
and the next job runs on the new one; callers get a `JobOutcome`, never an exception.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import selectors
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from engine.verify.jobs import Job
from engine.verify.records import EvaluationResult
from engine.verify.sandbox import REPO_ROOT, SandboxLimits, cache_env, clean_env

STARTUP_TIMEOUT_S = 180.0
LOG_TAIL_CHARS = 20000


@dataclass(frozen=True)
class PoolConfig:
    cache_dir: Path
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    timeout_s: float = 120.0
    gpus: tuple[int, ...] | None = None  # one worker per listed GPU (CUDA_VISIBLE_DEVICES); None: no pinning
    denied_roots: tuple[Path, ...] = ()
    max_jobs_per_worker: int = 200
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, settings=None, **overrides) -> PoolConfig:
        if settings is None:
            from engine.settings import get_settings

            settings = get_settings()
        limits = SandboxLimits(cpu_seconds=settings.worker_cpu_seconds, file_size_mb=settings.worker_file_size_mb,
                               memory_mb=settings.worker_memory_mb)
        denied = (REPO_ROOT / "assets", REPO_ROOT / "tests", settings.home)
        values = {"cache_dir": settings.cache_dir, "limits": limits, "timeout_s": settings.worker_timeout_s,
                  "denied_roots": denied}
        values.update(overrides)
        return cls(**values)


@dataclass
class WorkerInfo:
    pid: int
    cuda: bool
    device: str | None
    torch: str
    startup_s: float
    applied: dict


@dataclass
class JobOutcome:
    """What happened to one job: `ok` (a result came back), `timeout`, `crashed`, or `start_failed`."""

    status: str
    result: EvaluationResult | None = None
    raw: dict | None = None  # the result message for non-evaluation jobs (info)
    log: str = ""
    seconds: float = 0.0
    detail: str = ""
    worker_pid: int | None = None


def gpu_driver_present() -> bool:
    """Whether an NVIDIA driver is loaded here: cheap, no CUDA initialisation (False means certainly no GPU)."""
    return Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidiactl").exists()


def _signal_name(returncode: int | None) -> str:
    if returncode is None:
        return "still running"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"


class Worker:
    """One worker process and its pipes; not thread-safe (the pool hands it to one thread at a time)."""

    def __init__(self, index: int, config: PoolConfig, gpu: int | None) -> None:
        self.index, self.config, self.gpu = index, config, gpu
        self.proc: subprocess.Popen | None = None
        self.info: WorkerInfo | None = None
        self.jobs = 0
        self.cpu_s = 0.0
        self._buffer = b""
        self.base = Path(config.cache_dir) / "verify" / f"worker-{index}"
        self.log_path = self.base.parent / "logs" / f"worker-{index}.log"

    def start(self) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cache = Path(self.config.cache_dir)
        extra = {**cache_env(cache), **self.config.env}
        if self.gpu is not None:
            extra["CUDA_VISIBLE_DEVICES"] = str(self.gpu)
        env = clean_env(self.base, **extra)
        spec = {"limits": self.config.limits.to_json(), "cache_dir": str(cache),
                "denied_roots": [str(p) for p in self.config.denied_roots]}
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "engine.verify.worker", json.dumps(spec)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, cwd=self.base,
                                         env=env, start_new_session=True)
        finally:
            log.close()
        self._buffer, self.info, self.jobs, self.cpu_s = b"", None, 0, 0.0

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _read_message(self, deadline: float) -> dict | None:
        """The next protocol line, or None on EOF; raises TimeoutError at the deadline."""
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                if not selector.select(timeout=min(remaining, 1.0)):
                    continue
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    return None
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def ready(self) -> WorkerInfo:
        """Wait for the hello; raises RuntimeError (with the log) if the worker cannot start."""
        if self.info is not None:
            return self.info
        if self.proc is None:
            self.start()
        try:
            hello = self._read_message(time.monotonic() + STARTUP_TIMEOUT_S)
        except TimeoutError:
            hello = None
        if not hello or hello.get("type") != "hello":
            self.kill()
            raise RuntimeError(f"worker did not start ({_signal_name(self.proc.returncode)}): {self.log_tail(0)}")
        self.info = WorkerInfo(hello["pid"], hello["cuda"], hello.get("device"), hello.get("torch", ""),
                               hello.get("startup_s", 0.0), hello.get("applied", {}))
        return self.info

    def log_size(self) -> int:
        try:
            return self.log_path.stat().st_size
        except OSError:
            return 0

    def log_tail(self, offset: int) -> str:
        try:
            with open(self.log_path, "rb") as handle:
                handle.seek(offset)
                text = handle.read().decode("utf-8", "replace")
        except OSError:
            return ""
        return text[-LOG_TAIL_CHARS:]

    def run(self, job: Job, timeout_s: float) -> JobOutcome:
        try:
            self.ready()
        except RuntimeError as exc:
            return JobOutcome("start_failed", detail=str(exc))
        offset, started, pid = self.log_size(), time.monotonic(), self.info.pid
        try:
            self.proc.stdin.write((json.dumps({"type": "job", "job": job.to_json()}) + "\n").encode())
            self.proc.stdin.flush()
            message = self._read_message(started + timeout_s)
        except TimeoutError:
            self.kill()
            return JobOutcome("timeout", log=self.log_tail(offset), seconds=time.monotonic() - started,
                              detail=f"no result after {timeout_s:.0f} s; the worker was killed",
                              worker_pid=pid)
        except (BrokenPipeError, OSError, json.JSONDecodeError):
            message = None
        seconds = time.monotonic() - started
        if message is None or message.get("type") != "result":
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=5)
            detail = f"worker {_signal_name(self.proc.poll())}"
            self.kill()
            return JobOutcome("crashed", log=self.log_tail(offset), seconds=seconds, detail=detail,
                              worker_pid=pid)
        self.jobs += 1
        self.cpu_s = message.get("cpu_s", 0.0)
        if message.get("fatal"):
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
            self.kill()
        raw = message["result"]
        result = EvaluationResult.from_json(raw) if "verdict" in raw else None
        return JobOutcome("ok", result=result, raw=raw, log=self.log_tail(offset), seconds=seconds,
                          worker_pid=pid)

    @property
    def worn_out(self) -> bool:
        """Recycled before the CPU rlimit (cumulative per process) or leaks can bite."""
        return self.jobs >= self.config.max_jobs_per_worker or self.cpu_s > 0.5 * self.config.limits.cpu_seconds

    def kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout):
            with contextlib.suppress(OSError):
                stream.close()
        self.proc, self.info = None, None

    def stop(self) -> None:
        if self.alive:
            with contextlib.suppress(OSError):
                self.proc.stdin.write(b'{"type": "stop"}\n')
                self.proc.stdin.flush()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.kill()


class WorkerPool:
    """`run(job)` blocks for a free worker; `submit(job)` returns a Future. Use as a context manager."""

    def __init__(self, size: int | None = None, config: PoolConfig | None = None) -> None:
        self.config = config or PoolConfig.from_settings()
        gpus = self.config.gpus
        self.size = size or (len(gpus) if gpus else 1)
        self._workers = [Worker(i, self.config, gpus[i % len(gpus)] if gpus else None) for i in range(self.size)]
        self._idle: queue.Queue[Worker] = queue.Queue()
        for worker in self._workers:
            self._idle.put(worker)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._info: WorkerInfo | None = None
        self.replacements = 0

    @property
    def info(self) -> WorkerInfo:
        """What the workers run on (GPU name or none), from a started worker's hello."""
        if self._info is None:
            worker = self._idle.get()
            try:
                self._info = worker.ready()
            finally:
                self._idle.put(worker)
        return self._info

    @property
    def gpu(self) -> bool:
        return self.info.cuda

    def run(self, job: Job, timeout_s: float | None = None, fresh: bool = False) -> JobOutcome:
        """Run one job on the next free worker (a newly started one when `fresh`)."""
        worker = self._idle.get()
        try:
            if fresh or worker.worn_out:
                worker.stop()
            if worker.proc is None:
                worker.start()
            outcome = worker.run(job, timeout_s or self.config.timeout_s)
            if outcome.status != "ok" or not worker.alive:
                self.replacements += 1
                worker.kill()
                worker.start()  # the replacement starts up while the caller reads this outcome
            return outcome
        finally:
            self._idle.put(worker)

    def submit(self, job: Job, timeout_s: float | None = None, fresh: bool = False) -> Future[JobOutcome]:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="verify")
        return self._executor.submit(self.run, job, timeout_s, fresh)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for worker in self._workers:
            worker.stop()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
