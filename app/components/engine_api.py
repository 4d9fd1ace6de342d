"""The dashboard's door to the run engine (`engine.runs.run`), and where a run's files are.

Pages import the engine through here so that a missing or broken engine is one sentence on the
page instead of an import error, and so tests can stand a fake engine in `sys.modules`.
"""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path
from types import ModuleType

from db.queries import RunSummary


class EngineUnavailable(RuntimeError):
    """The run engine could not be imported; the message says so in words."""


def runs_module() -> ModuleType:
    try:
        return importlib.import_module("engine.runs.run")
    except ImportError as exc:
        raise EngineUnavailable(f"The run engine (engine.runs.run) could not be loaded: {exc}. "
                                "Starting and steering runs needs it; browsing stored runs does not.") from exc


def driver_present() -> bool:
    """Whether an NVIDIA driver is installed at all: instant, unlike importing torch to ask CUDA."""
    return shutil.which("nvidia-smi") is not None or any(Path("/dev").glob("nvidia[0-9]*"))


def gpu_available() -> bool:
    """No driver means no GPU, said at once; otherwise the engine asks CUDA (which takes seconds)."""
    if not driver_present():
        return False
    try:
        return bool(runs_module().gpu_available())
    except EngineUnavailable:
        return True


def run_folder(run: RunSummary) -> Path:
    """The run's folder: the one the run recorded, else the engine's rule, else the documented layout."""
    if run.folder:
        return Path(run.folder)
    try:
        return Path(runs_module().run_folder(run.id))
    except EngineUnavailable:
        from engine.settings import get_settings

        return get_settings().runs_dir / str(run.id)


def events_dir(run: RunSummary) -> Path:
    return run_folder(run) / "events"


def log_path(run: RunSummary) -> Path:
    return run_folder(run) / "run.log"


def send_control(run_id: int, action: str, payload: dict | None = None) -> None:
    runs_module().send_control(run_id, action, payload)
