"""The configurations an imported KernelBench file gets: a small one, the file's own sizes, and a hidden
odd batch, because a single shape invites shape specialisation.

Only the batch changes; everything the file computes from it follows when the module loads
(`engine.wire.reference_module`). A derived configuration is our invention, not the user's, so
when the file cannot run at it (BatchNorm in training mode needs more than one value per channel) the
next choice is tried, and if none runs it is dropped with the reason; the file's own sizes must run.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.problems.model import Config
from engine.problems.sizes import ModuleSizes

WRITTEN = "as-written"


@dataclass(frozen=True)
class PlannedConfig:
    """One place in the problem's configuration list and the configurations that may fill it, in order."""

    role: str  # small | written | hidden
    choices: tuple[Config, ...]


def _odd_batches(batch: int) -> list[int]:
    """Odd batches near half the written one (then just above it), never 1 or the written batch."""
    candidates = [batch // 2 + 1, batch // 2 + 2, batch + 1, batch + 2, batch + 3, batch + 4]
    return list(dict.fromkeys(b for b in candidates if b % 2 and b >= 3 and b != batch))


def plan_configs(sizes: ModuleSizes) -> list[PlannedConfig]:
    """Small (batch 1, else 2), as written, hidden odd batch; only as written where no size reads as a batch."""
    params = sizes.params
    written = PlannedConfig("written", (Config(WRITTEN, params),))
    name = sizes.batch_name
    if name is None:
        return [written]
    batch = int(params[name])

    label = "batch" if "batch" in name.lower() or name in ("B", "b", "bs") else name  # `N-1` for a matrix size

    def at(value: int, hidden: bool = False) -> Config:
        return Config(f"{label}-{value}", {**params, name: value}, hidden=hidden)

    plan = []
    small = [at(b) for b in (1, 2) if b < batch]
    if small:
        plan.append(PlannedConfig("small", tuple(small)))
    plan.append(written)
    plan.append(PlannedConfig("hidden", tuple(at(b, hidden=True) for b in _odd_batches(batch)[:2])))
    return plan
