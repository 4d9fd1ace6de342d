"""A C entry point's timed calls, made the same way by the judge (its baselines) and the runner (the
candidate): the arrays rotate through their placements (`c_entry`), and before every call its set gets
fresh values and poisoned outputs, untimed.

Fresh values: an array drawn by an [[args]] rule holds independent draws of one distribution, so a
rotation of it by a seed-chosen number of places is another draw of that distribution, written in one
pass with no generator to run. No two timed calls then see the same values, so a result remembered from
an earlier call (keyed on the buffers and a sample of their values) is a wrong answer, and any timed call
may be checked. Arrays an inputs.py made (they may have structure: a symmetric matrix, a valid index)
keep their values; `inout` ones are restored before every call, as before.
"""

from __future__ import annotations

import numpy as np
import torch

from engine.wire.c_entry import PlacementCycle, timing_placements
from engine.wire.fresh import on_one_thread, snapshot, trial_seed
from engine.wire.poison import poison_


def shift_of(base_seed: int, call: int, size: int) -> int:
    """How many places a drawn array is rotated for a timing's `call`-th call."""
    return trial_seed(base_seed, call) % max(size, 1)


def roll_into(target: torch.Tensor, source: torch.Tensor, shift: int) -> None:
    """`target` = `source` rotated by `shift` places (numpy's and torch's `roll`), without a temporary."""
    flat_t, flat_s = target.reshape(-1), source.reshape(-1)
    n = flat_s.numel()
    shift %= max(n, 1)
    if shift == 0:
        flat_t.copy_(flat_s)
        return
    flat_t[shift:].copy_(flat_s[:n - shift])
    flat_t[:shift].copy_(flat_s[n - shift:])


def values_of_call(values: dict, drawn: frozenset[str], specs: list, base_seed: int, call: int) -> dict:
    """The host values a timed call saw: the timing's values with every drawn input rotated for `call`."""
    out = dict(values)
    for spec in specs:
        if spec.is_array and spec.intent in ("in", "inout") and spec.name in drawn:
            out[spec.name] = np.roll(values[spec.name], shift_of(base_seed, call, values[spec.name].size))
    return out


class CTimedCalls:
    """One side's timed calls of a C entry point `fn` on the values of a timing's seed (see the module)."""

    def __init__(self, fn, specs: list, values: dict, drawn: frozenset[str], device: str, base_seed: int) -> None:
        self.fn, self.specs, self.base = fn, specs, base_seed
        self.cpu = device != "cuda"
        self.sets = timing_placements(specs, values, device)
        self.cycle = PlacementCycle(len(self.sets))
        arrays = [a for a in specs if a.is_array]
        self.pristine = {a.name: torch.from_numpy(values[a.name]).to(device) for a in arrays
                         if a.intent == "inout" or (a.intent == "in" and a.name in drawn)}
        self.drawn = frozenset(n for n in self.pristine if n in drawn)
        self.poisoned = [a.name for a in arrays if a.intent == "out"]
        self.outputs = [a.name for a in arrays if a.intent in ("out", "inout")]
        self.argvs = [[s[a.name].data_ptr() if a.is_array else a.value for a in specs] for s in self.sets]
        self.calls = 0  # warm-up included: the next call's values are those of trial_seed(base, calls)
        self.used = 0
        self.kept: list[tuple[int, list]] = []
        self.committed: list = []  # what the block's digests cover, per kept call (`fresh.timed_block`)

    def start_block(self) -> int:
        self.kept, self.committed = [], []
        return self.calls

    @on_one_thread
    def before(self, _name: str, _trial: int) -> None:
        target = self.sets[self.cycle.upcoming()]
        for name, source in self.pristine.items():
            shift = shift_of(self.base, self.calls, source.numel()) if name in self.drawn else 0
            roll_into(target[name], source, shift)
        for name in self.poisoned:
            poison_(target[name])

    def __call__(self, _trial: int) -> None:
        self.used = self.cycle.advance()
        self.fn(*self.argvs[self.used])

    @on_one_thread
    def after(self, _name: str, trial: int) -> None:
        if trial >= 0:
            used = self.sets[self.used]
            self.kept.append((self.calls, snapshot([used[name] for name in self.outputs])))
        self.calls += 1

    def argv(self, index: int = 0) -> list:
        return self.argvs[index]
