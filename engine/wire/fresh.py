"""Timed calls as both sides make them: fresh input values on every call, and every timed call's outputs
kept until the judge has chosen which of them it checks.

A candidate that remembers results (keyed on a tensor, a pointer or a sample of values) gains nothing when
no two timed calls see the same values; a candidate that computes only on the calls it expects to be
checked gains nothing when any timed call may be checked, chosen by the judge after the block ran. So every
timed call first gets the values of its own seed written into the same tensors (untimed, ahead of the
flush), and its outputs are copied aside after its end event (untimed). At the end of a block the runner
commits to a digest of every call's outputs inside the judge's clock; the judge then names a few calls, and
their outputs must match both the committed digest and the judge's own reference on that call's seed. An
output worked out only once the judge asked is either missing from the commitment or was worked out inside
the clock, where the judge's clock sees the time it took.

The judge's baseline loops go through the same steps, so both sides' loops cost the same.
"""

from __future__ import annotations

import contextlib
import functools
import zlib
from collections.abc import Callable, Iterator

import torch

from engine.wire import timing
from engine.wire.inputs import seed_generators

SEED_STRIDE = 1_000_003  # trial seeds of one timing: far from the correctness seeds and from each other
RING_BYTES = {"cuda": 8 * 2**30, "cpu": 2**30}  # outputs kept per block, at most (a block is sized to fit)
MIN_RING_TRIALS = 10  # a block keeps at least this many calls' outputs, however large they are


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """The untimed steps around a call run on one CPU thread, on both sides. With idle OpenMP helpers asleep
    (OMP_WAIT_POLICY=PASSIVE) every parallel region waits for them to wake: a runner with two intra-op threads
    spent 450 µs a call on steps that took the judge, on one, 100 µs, which the clock check read as hidden
    work. The candidate's own call keeps whatever threads it has."""
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def on_one_thread(method):
    """`one_thread` around a method of an object whose `cpu` says whether it works on CPU tensors (a plain
    function: always); on a GPU the steps are launches, and the toggle is only cost."""
    @functools.wraps(method)
    def wrapped(*args, **kwargs):
        if args and getattr(args[0], "cpu", True) is False:
            return method(*args, **kwargs)
        with one_thread():
            return method(*args, **kwargs)
    return wrapped


def trial_seed(base: int, call: int) -> int:
    """The seed of a timing's `call`-th call (warm-up calls included), from the timing's base seed."""
    return (base * SEED_STRIDE + 7919 * (call + 1)) % (2**62)


def ring_trials(output_bytes: int, device: str) -> int:
    """How many calls' outputs one block may keep: the trials per block the judge may plan."""
    return max(MIN_RING_TRIALS, RING_BYTES.get(device, 2**30) // max(output_bytes, 1))


def snapshot(outputs: list) -> list:
    """A private copy of a call's outputs (a candidate may hand back a buffer it rewrites on its next call)."""
    return [o.detach().clone() if isinstance(o, torch.Tensor) else o for o in outputs]


_MIX = 0x2545F491  # odd: the product's low 32 bits are a bijection of the word


def _word_sum(value: torch.Tensor) -> torch.Tensor:
    """The mixed sum of a tensor's 32-bit words, as a 0-d int64 tensor where the tensor lies (no sync)."""
    flat = value.detach().contiguous().reshape(-1).view(torch.uint8)
    pad = (-flat.numel()) % 4
    if pad:
        flat = torch.cat([flat, flat.new_zeros(pad)])
    mixed = flat.view(torch.int32) * _MIX
    mixed ^= mixed >> 15
    return mixed.sum(dtype=torch.int64)


def _combine(values: list, sums: list[int]) -> int:
    total, tensors = 0, iter(sums)
    for position, value in enumerate(values):
        if not isinstance(value, torch.Tensor):
            total = (total * 31 + zlib.crc32(repr(value).encode()) + position) % (2**61 - 1)
            continue
        part = next(tensors) % (2**61 - 1)
        total = (total * 1_000_003 + part + 131 * len(value.shape) + 7 * value.numel() + position) % (2**61 - 1)
    return total


def digests_of(calls: list[list]) -> list[int]:
    """The digest of each call's outputs (`digest`), with one transfer to the host for all of them: a sync
    per output would cost the timing loop tens of µs a call on a GPU."""
    sums = [[_word_sum(v) for v in values if isinstance(v, torch.Tensor)] for values in calls]
    flat = [t for group in sums for t in group]
    host = torch.stack([t.to(flat[0].device) for t in flat]).cpu().tolist() if flat else []
    out, start = [], 0
    for values, group in zip(calls, sums, strict=True):
        out.append(_combine(values, host[start:start + len(group)]))
        start += len(group)
    return out


def digest(values: list) -> int:
    """A digest of the bits of a call's outputs, the same on either side and on either device.

    Exact (bits, not values: an honest output is committed to as it is), not linear in them (a value cannot
    be nudged to meet a committed digest), computed where the tensors lie without a copy of them to the host,
    in three passes over 32-bit words (wrapping multiplication and shifts are the same on a CPU and a GPU, and
    an integer sum does not depend on its order). It says nothing about where a word lies: it binds what a
    runner shows the judge to what it had when its block ended, and the judge compares those values with
    its own answer.
    """
    return digests_of([values])[0]


class FreshCalls:
    """One side's timed calls of one callable: the inputs of every call's own seed written into fixed
    tensors before it (`before`), its outputs kept after it (`after`), warm-up calls included in the count.

    `make(seed)` gives the inputs of a seed; `call(inputs)` makes one call and returns its outputs as a
    list; `refill(kept, fresh)` writes fresh values into the kept inputs (the same tensors every call).
    """

    def __init__(self, make: Callable[[int], list], call: Callable[[list], list], base_seed: int,
                 refill: Callable[[list, list], list], reseed: bool = False) -> None:
        self.make, self.call, self.base, self.refill, self.reseed = make, call, base_seed, refill, reseed
        self.inputs: list = make(trial_seed(base_seed, 0))
        self.cpu = not any(isinstance(t, torch.Tensor) and t.is_cuda for t in self.inputs)
        self.calls = 0  # calls made so far, warm-up included: the next call's seed is trial_seed(base, calls)
        self.kept: list[tuple[int, list]] = []  # (call number, outputs) of the current block's timed calls
        self.last: list = []

    def start_block(self) -> int:
        """Forget the previous block's outputs; the number of the block's first call."""
        self.kept = []
        return self.calls

    @on_one_thread
    def before(self, _name: str, _trial: int) -> None:
        seed = trial_seed(self.base, self.calls)
        self.inputs = self.refill(self.inputs, self.make(seed))
        if self.reseed:
            seed_generators(seed)

    def __call__(self, _trial: int) -> object:
        self.last = self.call(self.inputs)
        return self.last

    @on_one_thread
    def after(self, _name: str, trial: int) -> None:
        if trial >= 0:
            self.kept.append((self.calls, snapshot(self.last)))
        self.last = []
        self.calls += 1


def kept_digests(kept: list[tuple[int, list]], device: str = "cpu") -> list[int]:
    """The digests a side commits to at the end of a block, one per timed call (on one thread where the
    outputs are CPU tensors, as the other untimed steps)."""
    with one_thread() if device != "cuda" else contextlib.nullcontext():
        return digests_of([outputs for _, outputs in kept])


def outputs_at(kept: list[tuple[int, list]], positions: list[int]) -> list[list]:
    """The kept outputs of a block's timed calls at `positions` (none for a position it does not have)."""
    return [kept[p][1] if 0 <= p < len(kept) else [] for p in positions]


def timed_block(calls, trials: int, warmup: int, device: str, flush_bytes: int) -> tuple[list[float], list[int]]:
    """Exactly `trials` timed calls of `calls` (a `FreshCalls` or `c_timing.CTimedCalls`) after `warmup`
    untimed ones, with their steps around each call, then the digests of what each call returned: (times µs,
    digests). The runner times its candidate with it and the judge its baselines, so both loops do the same."""
    calls.start_block()
    samples = timing.measure({"timed": calls}, timing.TrialPolicy.exactly(trials, flush_bytes), device,
                             before=calls.before, after=calls.after, warmup=warmup, cross_check=False)
    if device == "cuda":
        torch.cuda.synchronize()
    return samples["timed"].times_us, kept_digests(calls.kept, device)
