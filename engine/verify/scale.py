"""Which worker pool verifies candidates: the local one, or Ray workers across GPUs and hosts.

Ray is chosen by an explicit flag (`--ray/--no-ray`), else by `REFINERY_RAY` (`1`/`0`: how the flag
reaches the in-process pipeline and the run processes it spawns), else by `RAY_ADDRESS` being set:
pointing a shell at a cluster is the only step a user needs. Without an address, `--ray` starts a
Ray instance on this machine (every local GPU becomes a worker). The number of Ray workers comes
from the settings' `ray_workers` (env `REFINERY_RAY_WORKERS`); 0 or unset: one per GPU in the
cluster, or one per node when it has none.
"""

from __future__ import annotations

import logging
import os
from typing import Protocol

from engine.verify.judge.job import Job
from engine.verify.pool import JobOutcome, PoolConfig, WorkerInfo, WorkerPool
from engine.verify.ray_pool import RayWorkerPool

RAY_SWITCH = "REFINERY_RAY"
RAY_WORKERS = "REFINERY_RAY_WORKERS"
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


class VerifyPool(Protocol):
    """What the verifier needs from a pool; both `WorkerPool` and `RayWorkerPool` provide it."""

    size: int

    @property
    def info(self) -> WorkerInfo: ...

    @property
    def gpu(self) -> bool: ...

    def run(self, job: Job, timeout_s: float | None = None, fresh: bool = False) -> JobOutcome: ...

    def close(self) -> None: ...


def ray_requested(flag: bool | None = None) -> bool:
    """The flag if given, else REFINERY_RAY, else whether RAY_ADDRESS names a cluster."""
    if flag is not None:
        return flag
    switch = os.environ.get(RAY_SWITCH, "").strip().lower()
    if switch in _TRUE:
        return True
    if switch in _FALSE:
        return False
    if switch:
        raise ValueError(f"{RAY_SWITCH}={switch!r}: use 1 or 0")
    return bool(os.environ.get("RAY_ADDRESS", "").strip())


def choose_ray(flag: bool | None) -> None:
    """Record the CLI's --ray/--no-ray in the environment, so that this process's pipeline and any run
    process it starts make the same choice; None leaves the choice to RAY_ADDRESS."""
    if flag is not None:
        os.environ[RAY_SWITCH] = "1" if flag else "0"


def ray_workers(settings) -> int | None:
    """Workers asked for by the settings (`ray_workers`) or REFINERY_RAY_WORKERS; None: one per GPU / node."""
    value = getattr(settings, "ray_workers", None)
    if value is None:
        text = os.environ.get(RAY_WORKERS, "").strip()
        value = int(text) if text else 0
    return int(value) or None


def connect() -> None:
    """Join the cluster at RAY_ADDRESS, or start a Ray instance on this machine; no-op when connected."""
    try:
        import ray
    except ImportError as exc:
        raise RuntimeError("verifying through Ray needs the ray package: pip install 'ray[default]'") from exc
    if ray.is_initialized():
        return
    address = os.environ.get("RAY_ADDRESS", "").strip()
    if address:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    else:
        ray.init(include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)


def make_pool(settings=None, ray: bool | None = None) -> WorkerPool | RayWorkerPool:
    """The pool a verifier should use here: local sandboxed workers, or the same workers as Ray actors."""
    if settings is None:
        from engine.settings import get_settings

        settings = get_settings()
    config = PoolConfig.from_settings(settings)
    if not ray_requested(ray):
        return WorkerPool(config=config)
    connect()
    return RayWorkerPool(workers=ray_workers(settings), config=config)
