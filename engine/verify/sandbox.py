"""The walls around candidate code: an environment without secrets, resource limits, a scratch folder.

The parent builds the environment (`clean_env`) and starts the worker in a scratch folder; the
worker applies its own limits (`apply_limits`) before it reads its first job, so no candidate code
runs unlimited. The hard wall-clock timeout is the parent's (engine.verify.pool): a process cannot
be trusted to time itself out. Standard library only: the worker imports this.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|DATABASE_URL|^REFINERY_|^AWS_|^PG",
                         re.IGNORECASE)
REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SandboxLimits:
    """Per-process limits. address space only applies without a GPU: CUDA maps far more than it uses."""

    cpu_seconds: int = 600
    file_size_mb: int = 512
    memory_mb: int = 16384
    extra_processes: int = 256

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> SandboxLimits:
        return cls(**data)


def is_secret(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def clean_env(scratch: Path, base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The parent's environment minus anything secret, with temp files and caches pointed into `scratch`.

    PYTHONPATH gains the repository root so `engine.verify` imports from any working directory.
    """
    env = {k: v for k, v in (os.environ if base is None else base).items() if not is_secret(k)}
    python_path = [str(REPO_ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env.update(PYTHONPATH=os.pathsep.join(dict.fromkeys(python_path)), TMPDIR=str(scratch), TMP=str(scratch),
               TEMP=str(scratch), PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", PYTHONFAULTHANDLER="1")
    env.update(extra)
    return env


def cache_env(cache_dir: Path) -> dict[str, str]:
    """Where candidate JIT caches go (CuPy, Inductor, Triton, torch extensions): under the build cache,
    so a candidate compiled by one process (worker, profiler run) is loaded from disk by the next."""
    cache = Path(cache_dir)
    return {"CUPY_CACHE_DIR": str(cache / "cupy"), "TORCHINDUCTOR_CACHE_DIR": str(cache / "inductor"),
            "TRITON_CACHE_DIR": str(cache / "triton"), "TORCH_EXTENSIONS_DIR": str(cache / "torch_extensions")}


def _user_process_count() -> int:
    uid, count = os.getuid(), 0
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def _lower(limit: int, soft: int, hard: int | None = None) -> None:
    current_soft, current_hard = resource.getrlimit(limit)
    hard = soft if hard is None else hard
    if current_hard != resource.RLIM_INFINITY:
        hard = min(hard, current_hard)
        soft = min(soft, hard)
    resource.setrlimit(limit, (soft, hard))


def apply_limits(limits: SandboxLimits, gpu: bool) -> dict[str, str]:
    """Set this process's rlimits; returns what was set, for the worker's hello message.

    RLIMIT_NPROC counts every process of the user and root ignores it, so it is set only for an
    unprivileged user, to what already runs plus `extra_processes`.
    """
    applied = {}
    _lower(resource.RLIMIT_CPU, limits.cpu_seconds)
    applied["cpu_seconds"] = str(limits.cpu_seconds)
    _lower(resource.RLIMIT_FSIZE, limits.file_size_mb * 2**20)
    applied["file_size_mb"] = str(limits.file_size_mb)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if not gpu and limits.memory_mb:
        _lower(resource.RLIMIT_AS, limits.memory_mb * 2**20)
        applied["address_space_mb"] = str(limits.memory_mb)
    if os.getuid() != 0 and hasattr(resource, "RLIMIT_NPROC"):
        _lower(resource.RLIMIT_NPROC, _user_process_count() + limits.extra_processes)
        applied["processes"] = str(limits.extra_processes)
    return applied


def set_job_cpu_budget(seconds: float) -> None:
    """Lower the soft CPU limit to what this process has used plus `seconds` (SIGXCPU ends a runaway job)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    used = usage.ru_utime + usage.ru_stime
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    target = int(used + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        target = min(target, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (target, hard))


def cpu_seconds_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def fresh_scratch(path: Path) -> Path:
    """An empty folder for one job (the previous job's files are gone)."""
    path = Path(path)
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


def python_library_dirs() -> list[Path]:
    """Folders Python code is legitimately read from: the interpreter's and every sys.path entry but the repo."""
    dirs = {Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    for entry in sys.path:
        if entry and Path(entry).resolve() != REPO_ROOT and Path(entry).is_dir():
            dirs.add(Path(entry).resolve())
    dirs.add(REPO_ROOT / "engine")
    dirs.add(REPO_ROOT / ".venv")
    return sorted(dirs)
