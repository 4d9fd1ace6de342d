"""The worker pool spread over a Ray cluster: the same sandboxed worker, hosted by Ray actors.

Each actor owns a one-worker `WorkerPool` on its node, so sandboxing, limits, the parent-enforced
timeout and restart-after-crash are exactly those of the local pool; Ray only places the actors
(`num_gpus=1` each on a GPU cluster, a share of a GPU when asked for more workers than GPUs, and one
CPU each), moves the bytes and restarts an actor whose process or node died.

Files. A `Job` names files on the machine that built it: the candidate's, the C reference's and the
naive port's shared libraries. Those bytes travel with the job through Ray's object store (put once
per content hash by the driver, fetched by an actor only when its node-local copy is missing), and
the actor rewrites the job's paths to its copies, so a node needs no shared filesystem and builds
stay on the CPU cores of the machine that runs the refinement. The problem's own text (reference
module, inputs.py, evaluated argument sizes) is already inside the job. `load_inline` extension
folders are not shipped: torch's build files there hold absolute paths, so torch rebuilds them once
per actor in the actor's cache (inside the job's timeout) and reuses them after.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import math
import os
import queue
import shutil
import tempfile
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.verify.judge.job import Job
from engine.verify.pool import STARTUP_TIMEOUT_S, JobOutcome, PoolConfig, WorkerInfo, WorkerPool

LIBRARY_FIELDS = ("candidate_library", "reference_library", "baseline_library")
TRANSFER_MARGIN_S = 60.0  # on top of the job's timeout and a worker's start-up: moving bytes, scheduling
ACTOR_START_TIMEOUT_S = 300.0
SHIPPED_REFS_KEPT = 512


@dataclass(frozen=True)
class ShippedFile:
    """One file a job needs, as the actor receives it: which job field, its name, content hash, object ref."""

    field: str
    name: str
    digest: str
    ref: Any  # ray.ObjectRef of the bytes; resolved by the actor only when it lacks the file


def job_files(job: Job) -> dict[str, Path]:
    """The job's fields that name a file to ship, with the file (fields left unset or missing are skipped)."""
    files = {}
    for name in LIBRARY_FIELDS:
        value = getattr(job, name)
        if value and Path(value).is_file():
            files[name] = Path(value)
    return files


def localize(job: Job, cache_dir: Path, placed: dict[str, Path]) -> Job:
    """The job as it runs on an actor: shipped files at their node-local paths, caches and scratch there."""
    changes: dict[str, str | None] = {name: str(path) for name, path in placed.items()}
    if job.extensions_dir:
        changes["extensions_dir"] = str(cache_dir / "torch_extensions" / Path(job.extensions_dir).name)
    changes["cache_dir"] = str(cache_dir)
    changes["scratch_dir"] = str(cache_dir / "verify" / "jobs" / job.job_id)
    return dataclasses.replace(job, **changes)


def gpu_share(workers: int, gpus: float) -> float:
    """GPUs per actor: one each while there are enough, else an equal split that packs onto whole GPUs
    (3 workers on 2 GPUs get 1/2 each, not 2/3, which would leave the third unplaceable)."""
    if gpus <= 0:
        return 0.0
    per_gpu = math.ceil(workers / int(gpus)) if gpus >= 1 else workers
    return 1.0 if per_gpu <= 1 else math.floor(10_000 / per_gpu) / 10_000


class ShippingDesk:
    """Driver side: file bytes put into Ray's object store once per content hash (bounded)."""

    def __init__(self) -> None:
        self._refs: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def ship(self, job: Job) -> list[ShippedFile]:
        import ray

        shipped = []
        for name, path in job_files(job).items():
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            with self._lock:
                ref = self._refs.get(digest)
                if ref is None:
                    ref = self._refs[digest] = ray.put(data)
                self._refs.move_to_end(digest)
                while len(self._refs) > SHIPPED_REFS_KEPT:
                    self._refs.popitem(last=False)
            shipped.append(ShippedFile(name, path.name, digest, ref))
        return shipped


def _node_root(preferred: Path) -> Path:
    """Where actors on this node keep their caches: under the driver's cache folder when this node can
    write there (one host, or a shared home), else in the node's temporary folder."""
    for root in (Path(preferred) / "ray", Path(tempfile.gettempdir()) / "kernel-refinery-ray"):
        with contextlib.suppress(OSError):
            root.mkdir(parents=True, exist_ok=True)
            if os.access(root, os.W_OK):
                return root
    raise RuntimeError(f"no writable cache folder on this node (tried {preferred} and the temp folder)")


def _claim_slot(root: Path):
    """A cache folder no live actor on this node holds (an flock held for the actor's life): actors never
    share a worker's folder or log, and a restarted actor reuses a warm cache."""
    index = 0
    while True:
        folder = root / f"slot-{index}"
        folder.mkdir(parents=True, exist_ok=True)
        handle = open(folder / ".lock", "a")  # noqa: SIM115 - held open while the actor lives
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return folder, handle
        except BlockingIOError:
            handle.close()
            index += 1


class PoolActor:
    """What runs inside one Ray actor: a one-worker local pool plus the node-local copies of shipped files."""

    def __init__(self, config: PoolConfig) -> None:
        self.cache_dir, self._slot_lock = _claim_slot(_node_root(config.cache_dir))
        env = dict(config.env)
        if os.environ.get("CUDA_VISIBLE_DEVICES") is not None:  # the GPU Ray gave this actor
            env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
        # Ray's token and session files are this node's keys to the cluster: never visible inside a sandbox.
        hidden = (*config.hidden, Path.home() / ".ray", Path(tempfile.gettempdir()) / "ray")
        self.pool = WorkerPool(size=1, config=dataclasses.replace(config, cache_dir=self.cache_dir, gpus=None,
                                                                   env=env, hidden=hidden))

    def ping(self) -> str:
        """The node this actor runs on; any answer means Ray placed and started it."""
        import ray

        return ray.get_runtime_context().get_node_id()

    def warm(self) -> None:
        """Start the worker now so the first job does not pay for it; a failure shows on that job instead."""
        with contextlib.suppress(RuntimeError):
            self.pool.info  # noqa: B018 - starting the worker is the point

    def info(self) -> WorkerInfo:
        return self.pool.info

    def place(self, shipped: ShippedFile) -> Path:
        """The node-local copy of a shipped file, fetched from the object store only when missing."""
        import ray

        target = self.cache_dir / "shipped" / shipped.digest[:2] / shipped.digest / shipped.name
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.{os.getpid()}.part")
            partial.write_bytes(ray.get(shipped.ref))
            os.replace(partial, target)
        return target

    def run(self, job_data: dict, shipped: list[ShippedFile], timeout_s: float, fresh: bool) -> JobOutcome:
        job = Job.from_json(job_data)
        try:
            placed = {item.field: self.place(item) for item in shipped}
        except Exception as exc:  # noqa: BLE001 - any transfer failure is this job's outcome, not the actor's end
            return JobOutcome("start_failed", detail=f"the job's files did not reach this node: "
                                                     f"{type(exc).__name__}: {exc}")
        job = localize(job, self.cache_dir, placed)
        try:
            return self.pool.run(job, timeout_s, fresh=fresh)
        finally:
            shutil.rmtree(job.scratch_dir, ignore_errors=True)

    def close(self) -> None:
        self.pool.close()
        self._slot_lock.close()  # the slot is free for the next actor on this node


class RayWorkerPool:
    """`WorkerPool`'s interface (`run`, `submit`, `info`, `gpu`, `size`, `close`) over Ray actors.

    Needs a connected Ray (`engine.verify.scale.connect`). `workers=None`: one per GPU in the cluster, or
    one per node when it has no GPU.
    """

    def __init__(self, workers: int | None = None, config: PoolConfig | None = None) -> None:
        import ray

        self.config = config or PoolConfig.from_settings()
        self._actors: list = []
        self._idle: queue.Queue = queue.Queue()
        self._desk = ShippingDesk()
        self._info: WorkerInfo | None = None
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self.replacements = 0
        resources = ray.cluster_resources()
        gpus, cpus = float(resources.get("GPU", 0)), float(resources.get("CPU", 0))
        if not workers:
            workers = int(gpus) if gpus >= 1 else max(1, sum(1 for n in ray.nodes() if n.get("Alive")))
        if workers > cpus:
            raise ValueError(f"{workers} Ray workers need a CPU each, but the cluster has {cpus:g} CPUs")
        self.size = workers
        self.resources = {"num_gpus": gpu_share(workers, gpus), "num_cpus": 1}
        actor_class = ray.remote(PoolActor).options(max_restarts=-1, max_task_retries=0, **self.resources)
        self._actors = [actor_class.remote(self.config) for _ in range(workers)]
        self._await_actors()
        for actor in self._actors:
            actor.warm.remote()
            self._idle.put(actor)

    def _await_actors(self) -> None:
        import ray

        pings = [actor.ping.remote() for actor in self._actors]
        ready, _ = ray.wait(pings, num_returns=len(pings), timeout=ACTOR_START_TIMEOUT_S)
        if len(ready) < len(pings):
            self.close()
            raise RuntimeError(f"only {len(ready)} of {len(pings)} Ray workers started within "
                               f"{ACTOR_START_TIMEOUT_S:.0f} s: the cluster lacks room for actors of "
                               f"{self.resources['num_gpus']:g} GPU / {self.resources['num_cpus']:g} CPU each")
        self.nodes = sorted(set(ray.get(ready)))

    @property
    def actors(self) -> tuple:
        """The actor handles (for inspection, e.g. which node each runs on)."""
        return tuple(self._actors)

    @property
    def info(self) -> WorkerInfo:
        """What the workers run on, from the first actor's worker (all actors of a pool get alike resources)."""
        import ray

        with self._lock:
            if self._info is None:
                self._info = ray.get(self._actors[0].info.remote())
            return self._info

    @property
    def gpu(self) -> bool:
        return self.info.cuda

    def run(self, job: Job, timeout_s: float | None = None, fresh: bool = False) -> JobOutcome:
        """Run one job on the next free actor. Candidate code runs in the actor's worker, never in the actor,
        so an actor (or node) lost under a job is Ray's trouble, not the candidate's: the job is sent once
        more after Ray restarted the actor, and only a second loss is its `crashed` outcome."""
        import ray
        from ray.exceptions import GetTimeoutError, RayError

        timeout = timeout_s or self.config.timeout_s
        shipped = self._desk.ship(job)
        actor = self._idle.get()
        try:
            for attempt in range(2):
                reply = actor.run.remote(job.to_json(), shipped, timeout, fresh)
                try:
                    return ray.get(reply, timeout=timeout + STARTUP_TIMEOUT_S + TRANSFER_MARGIN_S)
                except GetTimeoutError:
                    ray.kill(actor, no_restart=False)
                    self._revive(actor)
                    return JobOutcome("timeout", detail=f"the Ray worker gave no answer within {timeout:.0f} s "
                                                        "plus start-up and transfer time; it was restarted")
                except RayError as exc:
                    self._revive(actor)
                    if attempt:
                        first_line = str(exc).splitlines()[0] if str(exc) else ""
                        return JobOutcome("crashed", detail=f"the Ray worker was lost twice under this job "
                                                            f"({type(exc).__name__}: {first_line})")
            raise AssertionError("unreachable")
        finally:
            self._idle.put(actor)

    def _revive(self, actor) -> None:
        """Wait until Ray has restarted `actor` (jobs sent while it restarts would fail at once)."""
        import ray
        from ray.exceptions import GetTimeoutError, RayError

        self.replacements += 1
        deadline = time.monotonic() + ACTOR_START_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                ray.get(actor.ping.remote(), timeout=max(1.0, deadline - time.monotonic()))
                actor.warm.remote()
                return
            except GetTimeoutError:
                return
            except RayError:
                time.sleep(1.0)

    def submit(self, job: Job, timeout_s: float | None = None, fresh: bool = False) -> Future[JobOutcome]:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.size, thread_name_prefix="verify-ray")
        return self._executor.submit(self.run, job, timeout_s, fresh)

    def close(self) -> None:
        """Stop the workers inside the actors, then end the actors (the cluster itself stays up)."""
        import ray

        if self._executor is not None:
            self._executor.shutdown(wait=True)
        closing = [actor.close.remote() for actor in self._actors]
        with contextlib.suppress(Exception):
            ray.wait(closing, num_returns=len(closing), timeout=60)
        for actor in self._actors:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)
        self._actors = []

    def __enter__(self) -> RayWorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
