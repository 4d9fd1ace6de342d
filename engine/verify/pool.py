"""The verifier's processes: per GPU (or CPU slot) one judge and a few pre-warmed runners, each in a
sandbox of its own.

A runner is started before it is needed (torch imported, CUDA context made) and serves exactly one
candidate; then it is killed with everything it started and a fresh one takes its place. The judge
is long-lived and never runs candidate code. For each job the pool hands the judge the job and the
socket of a warm runner, enforces the wall-clock timeout (a process cannot be trusted to time
itself out) and turns what happened into a `JobOutcome`; callers never get an exception.

Where the machine has cores to spare (see `cores`), each slot's judge runs on a core of its own and
the runner joins it there when it takes a job; runners warm up, and this process works, on the other
cores. Each outcome carries a `HostRecord` of where the job ran and what else ran meanwhile.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import math
import os
import queue
import select
import socket
import subprocess
import sys
import tarfile
import threading
import time
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from engine.sandbox import JobLimits, Mount, SandboxProcess, SandboxSpec, boundary, spawn
from engine.sandbox import scratch as scratch_folders
from engine.sandbox.accounting import open_job_meters
from engine.sandbox.launch import sweep_leftovers
from engine.sandbox.output import Bounded, Drain
from engine.sandbox.programs import JUDGE_PACKAGES, UNTRUSTED_PACKAGES, hidden_roots, mounts_for, python_env
from engine.schema.verdict import EvaluationResult
from engine.verify.cores import CoreReservation, SlotCores
from engine.verify.host import HostRecord, HostWatch
from engine.verify.judge.job import Job
from engine.wire.channel import Channel, ChannelClosed, ProtocolError

STARTUP_TIMEOUT_S = 300.0
GATE_POLL_S = 0.02  # while runners import: how soon a new spare is watched too
RUNNER_START_TRIES = 3  # warm runners tried for one job before the job fails as the verifier's
JUDGE_GRACE_S = 30.0
LOG_TAIL_CHARS = 20000
LOG_HEAD_BYTES = 64 << 10  # of a runner's or the judge's output, kept in memory while it runs
LOG_TAIL_BYTES = 256 << 10
EXTENSIONS_INSIDE = "/refinery/ext"
QUIET_FLOORS_KEPT = 512  # per problem, as the judge keeps them (clock.QuietLoops.KEPT)
QUIET_PROBLEMS_KEPT = 64
# OpenMP's idle threads sleep instead of spinning between parallel regions, in the judge and the runner alike:
# a spinning helper's CPU time counts as the job's own, so the clock check took the main thread's wait for a
# core held by another process as caused by the job itself and kept it on the clock (an honest torch candidate
# on a 2-core machine: 3.9-4.5 ms of a block's waiting kept, 260-290 µs a trial unexplained, 211-235 allowed);
# a judge's helper spinning while it waits for the runner's reply also held the core the runner's parallel
# flush between trials needed
TIMED_PROCESS_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}


@dataclass(frozen=True)
class PoolConfig:
    cache_dir: Path
    limits: JobLimits = field(default_factory=JobLimits)  # each runner (one candidate)
    # The judge creates the shared regions, memfds that count against its file-size limit. It erases a region
    # (writes every page, in its own memory) before lending it again, so a region larger than its memory limit
    # would end the judge: its file-size limit is its memory limit, and such a region fails at its creation.
    judge_limits: JobLimits = field(default_factory=lambda: JobLimits(memory_mb=65536, processes=512,
                                                                      cpu_seconds=24 * 3600, file_size_mb=65536))
    timeout_s: float = 120.0
    gpus: tuple[int, ...] | None = None  # one slot per listed GPU (CUDA_VISIBLE_DEVICES); None: no pinning
    spares: int = 0  # warm runners kept per slot; 0: chosen from the machine (see `spare_count`)
    hidden: tuple[Path, ...] = ()  # never visible in a sandbox besides the repository (the data folder)
    max_jobs_per_judge: int = 500
    env: dict[str, str] = field(default_factory=dict)  # extra variables for the sandboxes (never secrets)
    scratch_root: Path | None = None
    timing_cores: str = "auto"  # auto | off | a core list (see engine.verify.cores)

    @classmethod
    def from_settings(cls, settings=None, **overrides) -> PoolConfig:
        if settings is None:
            from engine.settings import get_settings

            settings = get_settings()
        limits = JobLimits(memory_mb=settings.worker_memory_mb, processes=settings.worker_processes,
                           cpu_seconds=settings.worker_cpu_seconds, file_size_mb=settings.worker_file_size_mb,
                           scratch_mb=settings.worker_scratch_mb)
        values = {"cache_dir": settings.cache_dir, "limits": limits, "timeout_s": settings.worker_timeout_s,
                  "hidden": (settings.home,), "spares": settings.runner_spares,
                  "timing_cores": settings.timing_cores}
        values.update(overrides)
        return cls(**values)


@dataclass
class WorkerInfo:
    pid: int
    cuda: bool
    device: str | None
    torch: str
    startup_s: float
    applied: dict  # what the boundary provides, in words


@dataclass
class JobOutcome:
    """What happened to one job: `ok` (the judge's verdict came back), `timeout`, `crashed` (the
    candidate's process died; the judge's verdict says where), or `start_failed`."""

    status: str
    result: EvaluationResult | None = None
    raw: dict | None = None
    log: str = ""
    seconds: float = 0.0
    detail: str = ""
    worker_pid: int | None = None
    host: HostRecord | None = None  # where the job ran and what else ran meanwhile (None: it never started)


def gpu_driver_present() -> bool:
    """Whether an NVIDIA driver is loaded here: cheap, no CUDA initialisation (False means certainly no GPU)."""
    return Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidiactl").exists()


WARM_UP_STEPS = ("imports", "gate", "context", "cupy", "digest", "profiler", "knockout")  # the runner's `warm_up`


def startup_steps(hello: dict) -> dict[str, float]:
    """The runner's own account of its warm-up, as `runner_startup.<step>` wall seconds (for the record
    only: it ran before any candidate, and only known steps with plain numbers are taken)."""
    steps = hello.get("startup_phases")
    if not isinstance(steps, dict):
        return {}
    taken: dict[str, float] = {}
    for name in WARM_UP_STEPS:
        value = steps.get(name)
        if isinstance(value, list) and value and isinstance(value[0], int | float) and math.isfinite(value[0]):
            taken[f"runner_startup.{name}"] = float(value[0])
    return taken


def spare_count(config: PoolConfig, gpu: bool) -> int:
    """Warm runners per slot: a runner takes seconds to start (torch, the CUDA context) and serves one
    candidate, so a GPU slot keeps enough warming to start about one a second; a CPU slot keeps one.
    More is not faster: on a 16-core H100 host ten spares kept the judge fed (2.8 s of a 23.8 s batch
    spent waiting) and fourteen slowed every job by competing for the cores (RESULTS.md, 2026-12-08)."""
    if config.spares:
        return config.spares
    if not gpu:
        return 1
    return max(2, min(10, (os.cpu_count() or 4) - 4))


def _scratch_root(config: PoolConfig) -> Path:
    return Path(config.scratch_root or scratch_folders.default_root())


def _device_env(gpu: int | None) -> dict[str, str]:
    return {"CUDA_VISIBLE_DEVICES": str(gpu)} if gpu is not None else {}


class _Sandboxed:
    """A sandboxed program of ours with a socket to it and the bounded head and tail of what it prints."""

    def __init__(self, config: PoolConfig, role: str, gpu: int | None) -> None:
        self.config, self.role, self.gpu = config, role, gpu
        self.started_at = time.monotonic()
        self.job: SandboxProcess | None = None
        self.channel: Channel | None = None
        self.hello: dict | None = None
        self.scratch: Path | None = None
        self.log: Drain | None = None  # what it prints: head and tail, in memory (no file to leave behind)

    def _start(self, argv: list[str], packages: tuple[str, ...] | None, limits: JobLimits, gpu_devices: bool,
               env: dict[str, str], mounts: list[Mount], scratch_env: dict[str, str] | None = None,
               cpus: tuple[int, ...] | None = None) -> None:
        """Start the program (on `cpus`, if given); `scratch_env` names variables that point into its scratch
        folder."""
        self.scratch = scratch_folders.make(self.role, _scratch_root(self.config), limits.scratch_mb)
        home = "/scratch" if boundary().namespaced else str(self.scratch)
        env = {**TIMED_PROCESS_ENV, **env, **{name: f"{home}/{sub}" for name, sub in (scratch_env or {}).items()}}
        log_read, log_write = os.pipe()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            spec = SandboxSpec(argv=[*argv, "--fd", str(theirs.fileno())], scratch=self.scratch,
                               env=python_env(packages, **{**env, **_device_env(self.gpu), **self.config.env}),
                               mounts=[*mounts_for(packages), *mounts], hidden=hidden_roots(*self.config.hidden),
                               gpu=gpu_devices, limits=limits, role=self.role, cpus=cpus)
            self.job = spawn(spec, stdin=subprocess.DEVNULL, stdout=log_write, stderr=log_write,
                             pass_fds=(theirs.fileno(),))
        except BaseException:
            os.close(log_read)
            ours.close()
            self.close()
            raise
        finally:
            theirs.close()
            os.close(log_write)
        self.log = Drain.of(log_read, Bounded(LOG_HEAD_BYTES, LOG_TAIL_BYTES), name=f"{self.role}-log")
        self.channel = Channel(ours)

    def ready(self, timeout_s: float = STARTUP_TIMEOUT_S) -> dict:
        """The hello message; raises RuntimeError with the log if the process does not come up."""
        if self.hello is not None:
            return self.hello
        self.channel.sock.settimeout(timeout_s)
        try:
            message, _, _ = self.channel.receive()
        except (ChannelClosed, ProtocolError, OSError) as exc:
            with contextlib.suppress(Exception):
                self.job.wait(timeout=5)
            detail = self.job.exit_detail() if self.job else "not started"
            self.close()
            raise RuntimeError(f"the {self.role} did not start ({detail}; {exc}): {self.log_tail()[-3000:]}") from exc
        finally:
            if self.channel is not None:
                with contextlib.suppress(OSError):
                    self.channel.sock.settimeout(None)
        if message.get("type") != "hello":
            self.close()
            raise RuntimeError(f"the {self.role} sent {message.get('type')!r} instead of its hello")
        self.hello = message
        return message

    @property
    def alive(self) -> bool:
        return self.job is not None and self.job.poll() is None

    def log_tail(self) -> str:
        return self.log.buffer.text()[-LOG_TAIL_CHARS:] if self.log is not None else ""

    def close(self) -> None:
        if self.channel is not None:
            with contextlib.suppress(OSError):
                self.channel.close()
            self.channel = None
        if self.job is not None:
            self.job.close()
        if self.log is not None:
            self.log.join(5.0)  # its pipe ends with the job; the tail stays readable in memory
        if self.scratch is not None:
            scratch_folders.remove(self.scratch)
            self.scratch = None


class RunnerProcess(_Sandboxed):
    """A runner: started ahead, serves one candidate, then closed with everything it started. It warms up
    on the cores of everything else and is moved onto its slot's timing cores when it takes a job (so
    warming never shares a core with a timing); its thread pools are sized for the timing cores."""

    def __init__(self, config: PoolConfig, gpu: int | None, device: str, cores: SlotCores | None = None,
                 warm_on: tuple[int, ...] | None = None) -> None:
        super().__init__(config, "runner", gpu)
        self.device = device
        self.ext = scratch_folders.make("ext", _scratch_root(config), config.limits.scratch_mb)
        namespaced = boundary().namespaced
        env = {"TORCH_EXTENSIONS_DIR": EXTENSIONS_INSIDE if namespaced else str(self.ext)}
        pinned = cores is not None and cores.pinned
        if pinned:
            env["OMP_NUM_THREADS"] = str(len(cores.timing))
        try:
            self._start([sys.executable, "-m", "engine.untrusted.runner", "--device", device], UNTRUSTED_PACKAGES,
                        config.limits, device == "cuda", env,
                        [Mount(self.ext, EXTENSIONS_INSIDE, writable=True)] if namespaced else [],
                        {"CUPY_CACHE_DIR": "cupy", "TRITON_CACHE_DIR": "triton",
                         "TORCHINDUCTOR_CACHE_DIR": "inductor"}, cpus=warm_on if pinned else None)
        except BaseException:
            scratch_folders.remove(self.ext)
            raise

        # A GPU runner stops after its imports until the slot lets it onto the GPU (`serve.warm_up`'s gate):
        # "closed" (importing), "imported" (waiting for the go-ahead), "open" (on the GPU), "broken"
        self.gate = "closed" if device == "cuda" else "open"

    def take_imported(self, timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        """Receive the runner's word that its imports are done ("broken" where it sent anything else)."""
        self.channel.sock.settimeout(timeout_s)
        try:
            message, _, _ = self.channel.receive()
        except (ChannelClosed, ProtocolError, OSError):
            self.gate = "broken"  # its hello will not come either: `ready` says why
            return
        finally:
            with contextlib.suppress(OSError):
                self.channel.sock.settimeout(None)
        self.gate = "imported" if message.get("type") == "imported" else "broken"

    def let_onto_gpu(self) -> None:
        try:
            self.channel.send({"op": "warm"})
            self.gate = "open"
        except OSError:
            self.gate = "broken"

    def ready(self, timeout_s: float = STARTUP_TIMEOUT_S) -> dict:
        """The hello, letting the runner onto the GPU first where it still waits (its slot times nothing now:
        it is the runner of the slot's next job)."""
        if self.hello is None and self.gate == "closed":
            self.take_imported(timeout_s)
        if self.hello is None and self.gate == "imported":
            self.let_onto_gpu()
        return super().ready(timeout_s)

    def close(self) -> None:
        super().close()
        scratch_folders.remove(self.ext)


class JudgeProcess(_Sandboxed):
    """The slot's judge, on the slot's timing cores (it times the baselines and clocks the runner)."""

    def __init__(self, config: PoolConfig, gpu: int | None, device: str, cores: SlotCores | None = None) -> None:
        super().__init__(config, "judge", gpu)
        self.jobs = 0
        self._start([sys.executable, "-m", "engine.verify.judge", *([] if device == "cuda" else ["--cpu"])],
                    JUDGE_PACKAGES, config.judge_limits, device == "cuda", {}, [],
                    {"TORCHINDUCTOR_CACHE_DIR": "inductor", "TRITON_CACHE_DIR": "triton",
                     "CUPY_CACHE_DIR": "cupy"},  # CuPy: the fused digest kernel of its baselines' commitments
                    cpus=cores.timing if cores is not None and cores.pinned else None)


def _artifacts(job: Job) -> dict[str, bytes]:
    """The built files the judge and the runner need, by name, in the order the payload carries them."""
    blobs: dict[str, bytes] = {}
    if job.reference_library:
        blobs["reference"] = Path(job.reference_library).read_bytes()
    if job.baseline_library:
        blobs["baseline"] = Path(job.baseline_library).read_bytes()
    if job.candidate_library:
        blobs["candidate"] = Path(job.candidate_library).read_bytes()
    elif job.extensions_dir and Path(job.extensions_dir).is_dir():
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            for item in sorted(Path(job.extensions_dir).iterdir()):
                archive.add(item, arcname=item.name)
        blobs["candidate"] = buffer.getvalue()
    return blobs


def problem_key(job: Job, reference_library: bytes = b"") -> str:
    """Which problem's code a job makes the judge run (its reference module, inputs rules, C reference)."""
    digest = hashlib.sha256()
    for part in (job.kind, job.reference_source, job.reference_path, job.inputs_source or "", job.entry or ""):
        digest.update(part.encode() + b"\0")
    digest.update(reference_library)
    return digest.hexdigest()


class Slot:
    """One GPU (or the CPU): its judge and its warm runners; one job at a time, on the slot's cores.

    A judge runs the problem's own code (its reference, its inputs rules, its C reference library), which is
    as untrusted as a candidate's: it serves one problem only, and the first job of another problem gets a
    judge that has run no problem's code yet (warmed ahead, like the runners)."""

    def __init__(self, config: PoolConfig, gpu: int | None, cores: SlotCores | None = None,
                 others: tuple[int, ...] | None = None, setup: str = "") -> None:
        self.config, self.gpu = config, gpu
        self.cores, self.others, self.setup = cores, others, setup
        self.judge: JudgeProcess | None = None
        self.judge_problem: str | None = None  # the problem whose code the judge has run
        self.spare_judge: JudgeProcess | None = None  # warm, no problem's code run yet
        self.spares: deque[RunnerProcess] = deque()
        self.device = "cpu"
        self.info: WorkerInfo | None = None
        self.retiring: list[threading.Thread] = []
        self.teardown_seconds: list[float] = []  # each used runner's tear-down, off the next job's path
        self.released_at: float | None = None  # when the last job left the slot (monotonic)
        self.retire_seconds = 0.0  # what retiring its runner took the last job, on the slot's time
        # Each problem's quiet floors (the judge's quietest loop a trial on each piece of work, `clock.QuietLoops`),
        # as its judges last returned them: handed to the problem's next judge, which would start with none
        self.quiet_loops: OrderedDict[str, list] = OrderedDict()
        # A GPU slot's warming runners go onto the GPU only while it times nothing (`keep_gates`)
        self.gate_lock = threading.Lock()
        self.gate_changed = threading.Condition(self.gate_lock)  # a spare added, or the slot closing
        self.timing = False
        self.gatekeeper: threading.Thread | None = None
        self.closing = False

    def start(self) -> WorkerInfo:
        if self.judge is not None and self.judge.alive and self.info is not None:
            return self.info
        if self.judge is not None:
            self.judge.close()
        device = "cuda" if gpu_driver_present() else "cpu"
        started = time.perf_counter()
        spare, self.spare_judge = self.spare_judge, None
        self.judge = spare if spare is not None and spare.alive else JudgeProcess(self.config, self.gpu, device,
                                                                                  self.cores)
        if spare is not None and spare is not self.judge:
            spare.close()
        self.judge_problem = None
        hello = self.judge.ready()
        self.device = "cuda" if hello.get("cuda") else "cpu"
        where = boundary()
        self.info = WorkerInfo(hello.get("pid", 0), bool(hello.get("cuda")), hello.get("device"),
                               str(hello.get("torch", "")), time.perf_counter() - started,
                               {"sandbox": where.summary(), "missing": list(where.missing)})
        self.fill()
        return self.info

    def fill(self) -> None:
        while len(self.spares) < spare_count(self.config, self.device == "cuda"):
            runner = RunnerProcess(self.config, self.gpu, self.device, self.cores, self.others)
            with self.gate_changed:
                self.spares.append(runner)
                self.gate_changed.notify()
        if self.device == "cuda" and not self.closing and (self.gatekeeper is None or not self.gatekeeper.is_alive()):
            self.gatekeeper = threading.Thread(target=self.keep_gates, name="runner-gates", daemon=True)
            self.gatekeeper.start()
        if self.judge is not None and self.judge_problem is not None and \
                (self.spare_judge is None or not self.spare_judge.alive):
            if self.spare_judge is not None:
                self.spare_judge.close()
            self.spare_judge = JudgeProcess(self.config, self.gpu, self.device, self.cores)

    def judge_for(self, job: Job, blobs: dict[str, bytes]) -> None:
        """Make sure the judge has run no other problem's code than this job's (a fresh one if it has)."""
        key = problem_key(job, blobs.get("reference", b""))
        if self.judge_problem is not None and self.judge_problem != key:
            self.restart_judge()
            self.start()
        self.judge_problem = key

    def take_runner(self) -> RunnerProcess:
        """The oldest warm runner (waiting for it if it is still warming). On a GPU a new one starts behind
        it at once (many cores; the events time the device); on a CPU slot only after the job, so its
        start-up does not share the cores with the candidate's timing."""
        self.fill()
        with self.gate_lock:
            runner = self.spares.popleft()
        if self.device == "cuda":
            self.fill()
        return runner

    def run(self, job: Job, timeout_s: float) -> JobOutcome:
        entered = time.monotonic()
        idle = entered - self.released_at if self.released_at is not None else None
        blobs = _artifacts(job)
        try:
            self.start()
            self.judge_for(job, blobs)
        except RuntimeError as exc:
            return JobOutcome("start_failed", detail=str(exc))
        started = time.monotonic()
        runner, hello, failures = self.ready_runner()
        if runner is None:
            return JobOutcome("start_failed", detail="; ".join(failures)[-4000:])
        try:
            phases = {"runner_wait": time.monotonic() - started,  # the slot's own steps around the judge's job
                      "slot.before": started - entered, "slot.retire_before": self.retire_seconds,
                      "runner_age": started - runner.started_at,  # near runner_startup: warm runners ran short
                      "runner_startup": float(hello.get("startup_s", 0.0) or 0.0), **startup_steps(hello)}
            if idle is not None:
                phases["slot.idle_before"] = idle  # since the previous job left this slot: no job was ready
            mark = time.monotonic()
            cores, exclusive = self.place(runner)
            watch = HostWatch([self.judge.job.pid, runner.job.pid], cores, exclusive, self.setup,
                              {spare.job.pid: "warming runner" for spare in self.spares if spare.job},
                              reach=runner.job.cpus)
            phases["slot.setup"], mark = time.monotonic() - mark, time.monotonic()
            outcome = self._judge(job, blobs, runner, hello, started, timeout_s, watch)
            phases["slot.judge"], mark = time.monotonic() - mark, time.monotonic()
            outcome.host = watch.finish()
            phases["slot.finish"] = time.monotonic() - mark
            if outcome.result is not None:
                outcome.result.stage_seconds.update({name: round(s, 4) for name, s in phases.items()})
            return outcome
        finally:
            retiring = time.monotonic()
            self.retire(runner)
            self.fill()
            self.released_at = time.monotonic()
            self.retire_seconds = self.released_at - retiring

    def ready_runner(self) -> tuple[RunnerProcess | None, dict, list[str]]:
        """A warm runner that came up (its hello received), trying the next ones where one did not: a runner
        that fails to start (16 starting at once on a busy machine, a driver hiccup) is ours to retry, never
        the candidate's failure. (None, {}, why) when none came up in RUNNER_START_TRIES."""
        failures: list[str] = []
        for _ in range(RUNNER_START_TRIES):
            runner = self.take_runner()
            try:
                return runner, runner.ready(), failures
            except RuntimeError as exc:
                failures.append(str(exc)[-1500:])
                self.retire(runner)
        return None, {}, failures

    def retire(self, runner: RunnerProcess) -> None:
        """Kill the used runner now (every process of its sandbox: none of its code runs beside the next
        candidate), and finish its tear-down on a thread: waiting for its exit (the driver takes its CUDA
        context down: 0.15-0.25 s a candidate on an H100, a third of a native candidate's whole job when the
        next one waited for it), removing its cgroup and its files. The next job's import and correctness
        calls come first; its timing starts well after the context is gone."""
        if runner.job is not None:
            runner.job.kill(wait=False)
        self.retiring = [t for t in self.retiring if t.is_alive()]

        def tear_down() -> None:
            started = time.perf_counter()
            runner.close()
            self.teardown_seconds.append(time.perf_counter() - started)
            del self.teardown_seconds[:-1000]

        thread = threading.Thread(target=tear_down, name="retire-runner", daemon=True)
        thread.start()
        self.retiring.append(thread)

    def place(self, runner: RunnerProcess) -> tuple[frozenset[int], bool]:
        """Move the runner onto the slot's timing cores (where there are any); (the cores the job's
        processes can reach, as read back, and whether they are the slot's alone)."""
        moved = self.cores is not None and self.cores.pinned and runner.job.pin(self.cores.timing) == 0
        reach = runner.job.cpus() | (self.judge.job.cpus() if self.judge and self.judge.job else frozenset())
        exclusive = moved and self.cores.exclusive and reach <= set(self.cores.timing)
        return reach, exclusive

    def _judge(self, job: Job, blobs: dict[str, bytes], runner: RunnerProcess, hello: dict, started: float,
               timeout_s: float, watch: HostWatch) -> JobOutcome:
        sizes, payload = {k: len(v) for k, v in blobs.items()}, b"".join(blobs.values())
        judge = self.judge
        meters = open_job_meters(runner.job, int(hello.get("pid", 0) or 0))
        message = {"op": "job", "job": job.to_json(), "blobs": sizes}
        if judge.jobs == 0 and self.judge_problem in self.quiet_loops:
            message["quiet_loops"] = self.quiet_loops[self.judge_problem]
        if meters is not None:
            message["meters"] = meters.layout
        try:
            judge.channel.send(message, payload=payload,
                               fds=(runner.channel.sock.fileno(), *(meters.fds if meters else ())))
        except OSError as exc:
            self.restart_judge()
            return JobOutcome("start_failed", detail=f"the judge did not take the job: {exc}")
        finally:
            if meters is not None:
                meters.close()  # the judge holds its own copies
        runner.channel.close()  # the judge holds the runner's socket now
        runner.channel = None
        message, timed_out = self._await_result(judge, runner, started + timeout_s, watch)
        seconds = time.monotonic() - started
        judge.jobs += 1
        if message is not None:
            self.keep_quiet_loops(message.get("quiet_loops"))
        if message is not None and message.get("runner_lost"):
            with contextlib.suppress(Exception):  # it is dying: let its exit status arrive
                runner.job.wait(timeout=5)
        exit_detail = runner.job.exit_detail() if runner.job else ""
        log = runner.log_tail()
        if message is None:
            self.restart_judge()
            status = "timeout" if timed_out else "crashed"
            detail = (f"no verdict within {timeout_s:.0f} s; the candidate's process was killed" if timed_out
                      else f"the judge stopped answering ({exit_detail})")
            return JobOutcome(status, log=log, seconds=seconds, detail=detail, worker_pid=hello.get("pid"))
        if "verdict" not in message["result"]:  # an info job: the runner's facts, passed on
            return JobOutcome("ok", None, message["result"], log, seconds, "", hello.get("pid"))
        result = EvaluationResult.from_json(message["result"])
        if judge.jobs >= self.config.max_jobs_per_judge:
            self.restart_judge()
        if timed_out:
            return JobOutcome("timeout", result, message["result"], log, seconds,
                              f"no verdict within {timeout_s:.0f} s ({result.message}); the candidate's process was "
                              "killed", hello.get("pid"))
        if message.get("runner_lost"):
            return JobOutcome("crashed", result, message["result"], log, seconds,
                              f"{result.message} ({exit_detail})", hello.get("pid"))
        return JobOutcome("ok", result, message["result"], log, seconds, "", hello.get("pid"))

    def keep_quiet_loops(self, floors: object) -> None:
        """Keep the floors the judge returned for its problem (bounded; the next judge checks each pair)."""
        if self.judge_problem is None or not isinstance(floors, list):
            return
        self.quiet_loops[self.judge_problem] = floors[:QUIET_FLOORS_KEPT]
        self.quiet_loops.move_to_end(self.judge_problem)
        while len(self.quiet_loops) > QUIET_PROBLEMS_KEPT:
            self.quiet_loops.popitem(last=False)

    def _await_result(self, judge: JudgeProcess, runner: RunnerProcess, deadline: float,
                      watch: HostWatch | None = None) -> tuple[dict | None, bool]:
        """The judge's result message, killing the runner at the deadline (the judge then answers). The
        judge says when its timing stage starts and ends: the watch then covers exactly that window, and
        on a GPU the slot's warming runners are paused for it."""
        paused: list[RunnerProcess] = []
        try:
            return self._receive_result(judge, runner, deadline, watch, paused)
        finally:
            self.resume_spares(paused)

    def keep_gates(self) -> None:
        """Let each warming runner onto the GPU as soon as its imports are done, unless the slot is timing
        (then at the timing's end, `resume_spares`): the imports go on beside a timing, the GPU work never."""
        while not self.closing:
            with self.gate_changed:
                waiting = {r.channel.sock.fileno(): r for r in self.spares if r.gate == "closed" and r.channel}
                if not waiting:
                    self.gate_changed.wait()  # idle until a spare is added (no polling while none imports)
                    continue
            try:
                readable, _, _ = select.select(list(waiting), [], [], GATE_POLL_S)
            except (OSError, ValueError):  # a runner closed meanwhile
                continue
            with self.gate_lock:
                for fd in readable:
                    runner = waiting[fd]
                    if runner in self.spares and runner.gate == "closed" and runner.channel is not None:
                        runner.take_imported(GATE_POLL_S * 20)
                        if runner.gate == "imported" and not self.timing:
                            runner.let_onto_gpu()

    def pause_spares(self) -> list[_Sandboxed]:
        """Stop the slot's runners that are on the GPU while a GPU timing runs: a runner warming up creates
        its CUDA context and compiles and launches its first kernels on the same GPU, and a second context's
        work is time-sliced with the one being timed (seen on the H200: short kernels and their eager
        baseline up to 1.8x slower with warming runners beside them). Runners still importing keep going:
        they wait at their gate until the timing ends. On a CPU slot nothing warms during a job."""
        if self.device != "cuda":
            return []
        with self.gate_lock:
            self.timing = True
            paused = [spare for spare in (*self.spares, self.spare_judge) if spare is not None
                      and spare.job is not None and spare.alive and getattr(spare, "gate", "open") == "open"]
        for spare in paused:
            spare.job.pause()
        return paused

    def resume_spares(self, paused: list[_Sandboxed]) -> None:
        for spare in paused:
            if spare.job is not None:
                spare.job.resume()
        paused.clear()
        with self.gate_lock:
            self.timing = False
            for runner in self.spares:
                if runner.gate == "imported":
                    runner.let_onto_gpu()

    def _receive_result(self, judge: JudgeProcess, runner: RunnerProcess, deadline: float,
                        watch: HostWatch | None, paused: list[RunnerProcess]) -> tuple[dict | None, bool]:
        timed_out = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 and not timed_out:
                timed_out = True
                runner.job.kill()
                deadline = time.monotonic() + JUDGE_GRACE_S
                continue
            if remaining <= 0:
                return None, timed_out
            judge.channel.sock.settimeout(min(remaining, 1.0))
            try:
                message, _, _ = judge.channel.receive()
            except TimeoutError:
                continue
            except (ChannelClosed, ProtocolError, OSError):
                return None, timed_out
            finally:
                with contextlib.suppress(OSError):
                    if judge.channel is not None:
                        judge.channel.sock.settimeout(None)
            if message.get("type") == "result":
                return message, timed_out
            if message.get("type") == "stage" and message.get("stage") == "timing":
                if message.get("phase") == "start":
                    paused.extend(self.pause_spares())
                    if watch is not None:
                        watch.begin("timing")
                else:
                    if watch is not None:
                        watch.end()
                    self.resume_spares(paused)

    def restart_judge(self) -> None:
        if self.judge is not None:
            self.judge.close()
        self.judge, self.info = None, None

    def close(self) -> None:
        with self.gate_changed:
            self.closing = True
            self.gate_changed.notify()
        if self.gatekeeper is not None:
            self.gatekeeper.join(1.0)
        for thread in self.retiring:
            thread.join()
        self.retiring.clear()
        for runner in self.spares:
            runner.close()
        self.spares.clear()
        if self.spare_judge is not None:
            self.spare_judge.close()
            self.spare_judge = None
        if self.judge is not None:
            if self.judge.channel is not None:  # None: it never came up, or was closed already
                with contextlib.suppress(OSError):
                    self.judge.channel.send({"op": "stop"})
            self.judge.close()
            self.judge = None


class WorkerPool:
    """`run(job)` blocks for a free slot; `submit(job)` returns a Future. Use as a context manager."""

    def __init__(self, size: int | None = None, config: PoolConfig | None = None) -> None:
        self.config = config or PoolConfig.from_settings()
        sweep_leftovers(_scratch_root(self.config))  # what pools killed before they could clean up left behind
        gpus = self.config.gpus
        self.size = size or (len(gpus) if gpus else 1)
        self.cores = CoreReservation(self.size, self.config.timing_cores)
        plan = self.cores.plan
        self._slots = [Slot(self.config, gpus[i % len(gpus)] if gpus else None, self.cores.slot(i),
                            plan.others if plan.pinned else None, plan.reason) for i in range(self.size)]
        self._idle: queue.Queue[Slot] = queue.Queue()
        for slot in self._slots:
            self._idle.put(slot)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._info: WorkerInfo | None = None
        self.replacements = 0
        self._running: dict[int, int] = {}  # job token → most other jobs seen running beside it
        self._tokens = 0

    @property
    def info(self) -> WorkerInfo:
        """What the slots run on (GPU name or none) and the sandbox they run in, from a started judge."""
        if self._info is None:
            slot = self._idle.get()
            try:
                self._info = slot.start()
            finally:
                self._idle.put(slot)
        return self._info

    @property
    def gpu(self) -> bool:
        return self.info.cuda

    def run(self, job: Job, timeout_s: float | None = None, fresh: bool = False) -> JobOutcome:
        """Run one job on the next free slot; every job gets a runner no candidate has touched."""
        slot = self._idle.get()
        token = self._flight_begins()
        try:
            outcome = slot.run(job, timeout_s or self.config.timeout_s)
        finally:
            others = self._flight_ends(token)
            self._idle.put(slot)
        if outcome.status != "ok":
            self.replacements += 1
        if outcome.host is not None:
            outcome.host.in_flight = others
        return outcome

    def _flight_begins(self) -> int:
        with self._lock:
            self._tokens += 1
            for running in self._running:
                self._running[running] = max(self._running[running], len(self._running))
            self._running[self._tokens] = len(self._running)
            return self._tokens

    def _flight_ends(self, token: int) -> int:
        """How many other jobs of this pool ran at some moment beside this one."""
        with self._lock:
            return self._running.pop(token, 0)

    def submit(self, job: Job, timeout_s: float | None = None, fresh: bool = False) -> Future[JobOutcome]:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="verify")
        return self._executor.submit(self.run, job, timeout_s, fresh)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        for slot in self._slots:
            slot.close()
        self.cores.release()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
