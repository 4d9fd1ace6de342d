"""Timed calls as both sides make them: fresh input values on every call, and every timed call's outputs
kept until the judge has chosen which of them it checks.

A candidate that remembers results (keyed on a tensor, a pointer or a sample of values) gains nothing when
no two timed calls see the same values; a candidate that computes only on the calls it expects to be
checked gains nothing when any timed call may be checked, chosen by the judge after the block ran. So every
timed call first gets the values of its own seed written into the same tensors (untimed, ahead of the
flush), and its outputs are copied aside after its end event (untimed). At the end of a block the runner
commits to a digest of every call's outputs inside the judge's clock, chunk by chunk (`wire.chunks`); the
judge then names a few calls and a few chunks of each of their outputs, and those must match both the
committed digests and the judge's own reference on that call's seed. An output worked out only once the
judge asked is either missing from the commitment or was worked out inside the clock, where the judge's
clock sees the time it took.

The judge's baseline loops go through the same steps, so both sides' loops cost the same.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator

import torch

from engine.wire import timing
from engine.wire.chunks import Part, commitments, revealed
from engine.wire.chunks import digest as digest  # the digest of one call's outputs, re-exported
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
        self.committed: list[list[Part]] = []  # what the block's digests cover, per kept call (`timed_block`)
        self.last: list = []

    def start_block(self) -> int:
        """Forget the previous block's outputs; the number of the block's first call."""
        self.kept, self.committed = [], []
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


def kept_commitments(kept: list[tuple[int, list]], device: str = "cpu") -> tuple[list[int], list[list[Part]]]:
    """The digests a side commits to at the end of a block, one per timed call, and the parts they cover (on
    one thread where the outputs are CPU tensors, as the other untimed steps)."""
    with one_thread() if device != "cuda" else contextlib.nullcontext():
        return commitments([outputs for _, outputs in kept])


def kept_digests(kept: list[tuple[int, list]], device: str = "cpu") -> list[int]:
    """The digests a side commits to at the end of a block, one per timed call."""
    return kept_commitments(kept, device)[0]


def outputs_at(kept: list[tuple[int, list]], positions: list[int]) -> list[list]:
    """The kept outputs of a block's timed calls at `positions` (none for a position it does not have)."""
    return [kept[p][1] if 0 <= p < len(kept) else [] for p in positions]


def reveal_of(calls, positions: list[int], picks: list[list[list[int]]]) -> tuple[list[list[dict]], list]:
    """What the last block of `calls` (a `FreshCalls` or `c_timing.CTimedCalls`, or None) shows of the calls
    and chunks the judge chose (`chunks.revealed`)."""
    if calls is None:
        return [[] for _ in positions], []
    return revealed(calls.kept, calls.committed, positions, picks)


def timed_block(calls, trials: int, warmup: int, device: str, flush_bytes: int) -> tuple[list[float], list[int]]:
    """Exactly `trials` timed calls of `calls` (a `FreshCalls` or `c_timing.CTimedCalls`) after `warmup`
    untimed ones, with their steps around each call, then the digests of what each call returned: (times µs,
    digests); what the digests cover stays in `calls.committed` for a reveal. The runner times its candidate
    with it and the judge its baselines, so both loops do the same."""
    calls.start_block()
    samples = timing.measure({"timed": calls}, timing.TrialPolicy.exactly(trials, flush_bytes), device,
                             before=calls.before, after=calls.after, warmup=warmup, cross_check=False)
    if device == "cuda":
        torch.cuda.synchronize()
    digests, calls.committed = kept_commitments(calls.kept, device)
    return samples["timed"].times_us, digests
