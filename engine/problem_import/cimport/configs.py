"""The configurations an imported C program gets, from the sizes it names.

A PolyBench program brings its datasets: SMALL and MEDIUM are shown (the naive CUDA port, the speed
baseline, runs on one GPU thread, so LARGE would take it minutes; `--datasets` chooses others), MINI and an
odd size between SMALL and MEDIUM are hidden, because one shape invites shape specialisation. A plain
program brings the sizes it writes: a quarter of them, as written, and a hidden odd size near half.
A configuration is our invention, not the user's, so one the program cannot run is replaced by the next
choice or dropped with the reason; the sizes as written (or the first shown dataset) must run.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.problems.model import Config

DEFAULT_VISIBLE = ("SMALL", "MEDIUM")
HIDDEN_DATASET = "MINI"
SMALL_SIZE = 8  # sizes below it (channels, a stencil's radius) are kept as written


@dataclass(frozen=True)
class Place:
    """One place in the problem's configuration list and the configurations that may fill it, in order."""

    role: str  # shown | required | hidden
    choices: tuple[Config, ...]


def _odd(value: int) -> int:
    return value if value % 2 else value + 1


def _between(low: dict[str, int], high: dict[str, int], fraction: float) -> dict[str, int]:
    return {k: _odd(int(low[k] + (high.get(k, low[k]) - low[k]) * fraction)) for k in low}


def plan_datasets(datasets: dict[str, dict[str, int]], visible: tuple[str, ...] = DEFAULT_VISIBLE) -> list[Place]:
    """Shown datasets (the first one required), the hidden odd size, then the hidden MINI."""
    shown = [d for d in visible if d in datasets] or list(datasets)[:2]
    places = [Place("required" if i == 0 else "shown", (Config(name.lower(), dict(datasets[name])),))
              for i, name in enumerate(shown)]
    low, high = datasets[shown[0]], datasets[shown[-1]]
    odd = [Config("odd", _between(low, high, f), hidden=True) for f in (0.5, 0.3, 0.7)]
    odd = [c for c in odd if c.params not in [datasets[s] for s in shown]]
    if odd:
        places.append(Place("hidden", tuple(odd)))
    if HIDDEN_DATASET in datasets and HIDDEN_DATASET not in shown:
        places.append(Place("hidden", (Config(HIDDEN_DATASET.lower(), dict(datasets[HIDDEN_DATASET]), hidden=True),)))
    return places


def plan_written(sizes: dict[str, int], varied: set[str]) -> list[Place]:
    """A quarter of the written sizes, the written ones, a hidden odd size near half."""
    def scaled(divisor: int, odd: bool) -> dict[str, int]:
        return {k: (_odd(max(v // divisor, 1)) if odd else max(v // divisor, 1)) if k in varied and v >= SMALL_SIZE
                else v for k, v in sizes.items()}

    places = []
    small = scaled(4, odd=False)
    if small != sizes:
        places.append(Place("shown", (Config("small", small),)))
    places.append(Place("required", (Config("as-written", dict(sizes)),)))
    hidden = [c for c in (scaled(2, odd=True), scaled(3, odd=True)) if c not in (small, sizes)]
    if hidden:
        places.append(Place("hidden", tuple(Config("odd", c, hidden=True) for c in hidden)))
    return places
