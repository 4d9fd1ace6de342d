"""Checking timed calls the runner could not predict: after each block of timed calls, the judge draws a
few of them at random, and a few chunks of each of their tensor outputs (`wire.chunks`), and asks for those
chunks' elements. What comes back must match the digests the runner committed to at the end of the block
(inside the judge's clock) and the same elements of the judge's own answer on that call's fresh values.

A candidate that works only on the calls (or the parts of a call) it expects to be checked, or returns a
remembered result, cannot know which these are; one that works out an answer only once asked has either
committed to another digest or spent the time inside the block, where the judge's clock sees it (`wire.fresh`
says more). Chunks instead of whole calls: a checked call used to move its whole output through host memory
on both sides (256 MiB a call on the largest configurations, more than the block's timed calls cost), and
the chance of catching a candidate that skips part of its work rests on how many elements are drawn at
random, not on how many are moved (`chunks.CHUNKS_PER_CALL` says how likely).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import torch

from engine.verify.judge.correctness import Comparison, compare
from engine.verify.judge.outcome import Findings
from engine.verify.judge.session import RunnerMisbehaved, RunnerSession
from engine.wire.chunks import CHUNKS_PER_CALL, call_digest, chunk_count, chunk_digest, chunk_span, part_of_reply
from engine.wire.shared import DTYPES, dtype_name

REVEALS_PER_TIMING = 6  # checked calls a timing: a candidate skipping a fifth of its calls is caught with a
# probability of 1 - 0.8**6 = 0.74, one skipping half with 0.98, and skipping gains only what it skips. Spread over
# the timing's blocks in proportion to their calls (at least one a block): a block's checked calls cost the judge a
# reference call each, and a transfer of the chosen chunks. The candidate learns neither which blocks nor which
# calls nor which chunks until each block has run.
REVEALS_PER_BLOCK = 2  # at most, and before the timing's calls are planned (its warm-up and calibration blocks)


@dataclass
class Answer:
    """What one call should have returned: the answer compared against, the native-precision answer that sets
    the rounding allowance (None: the answer is in native precision), and the outputs' names."""

    answer: list
    native: list | None = None
    labels: list[str] | None = None
    magnitude: list | None = None  # the honest rounding scale of each output (correctness.compare)


@dataclass(frozen=True)
class Like:
    """What one output of the timed configuration is, as the judge's own answer has it: a tensor's dtype and
    shape (the chunk layout the judge draws from), or a plain value's type."""

    label: str
    dtype: torch.dtype | None = None  # None: not a tensor
    shape: tuple[int, ...] = ()
    type_name: str = ""

    @property
    def chunks(self) -> int:
        if self.dtype is None:
            return 0
        numel = 1
        for size in self.shape:
            numel *= size
        return chunk_count(numel * torch.empty((), dtype=self.dtype).element_size())

    def span(self, index: int) -> tuple[int, int]:
        numel = 1
        for size in self.shape:
            numel *= size
        return chunk_span(numel, torch.empty((), dtype=self.dtype).element_size(), index)


class Reveals:
    """The judge's side of the check, for one job."""

    def __init__(self, runner: RunnerSession, findings: Findings, rtol: float, atol: float,
                 per_block: int = REVEALS_PER_BLOCK) -> None:
        self.runner, self.findings, self.rtol, self.atol, self.per_block = runner, findings, rtol, atol, per_block
        self.random = random.SystemRandom()  # nothing the candidate's process could have seen or seeded
        self.checked = 0
        self.rate: float | None = None  # checked calls per timed call, once the timing's calls are planned
        self.like: list[Like] = []  # the timed configuration's outputs (`expect`)

    def plan(self, calls: int) -> None:
        """The timing will make about `calls` timed calls from here on: check REVEALS_PER_TIMING of them."""
        self.rate = REVEALS_PER_TIMING / max(calls, 1)

    def expect(self, outputs: list, labels: list[str] | None = None) -> None:
        """The timed configuration's calls return outputs like `outputs` (the judge's own answer of one of its
        calls, in the dtype the candidate must return): the chunk layout the judge draws chunks from."""
        labels = labels or [f"output {i}" for i in range(len(outputs))]
        self.like = [Like(label, value.dtype, tuple(value.shape)) if isinstance(value, torch.Tensor)
                     else Like(label, type_name=type(value).__name__) for label, value in zip(labels, outputs,
                                                                                               strict=True)]

    def per(self, count: int) -> int:
        """How many of a block's `count` calls to check."""
        if self.rate is None:
            return min(self.per_block, count)
        return min(count, self.per_block, max(1, round(self.rate * count)))

    def picks(self) -> list[list[int]]:
        """The chunks to check of each output of one call: CHUNKS_PER_CALL of a tensor's (all, where it has no
        more), none of a plain value (it comes whole)."""
        return [sorted(self.random.sample(range(like.chunks), min(CHUNKS_PER_CALL, like.chunks)))
                for like in self.like]

    def check(self, block, warmup: int, answer: Callable[[int], Answer], stage: str) -> None:
        """Draw calls of `block` (whose first call is `block.first_call`, after `warmup` untimed ones) and chunks
        of their outputs, ask for them and check each against the commitment and `answer(call number)`."""
        count = len(block.times_us)
        earlier = self.findings.items.get("timed-output")
        if count == 0 or (earlier is not None and not earlier.passed):
            return
        positions = sorted(self.random.sample(range(count), self.per(count)))
        picks = [self.picks() for _ in positions]
        with self.runner.stage("reveal.request"):
            reply = self.runner.request("reveal", stage=stage, positions=positions, chunks=picks)
        if len(reply.calls) != len(positions):
            raise RunnerMisbehaved(stage, "the outputs of the timed calls the judge chose did not come back")
        for position, chosen, outputs in zip(positions, picks, reply.calls, strict=True):
            call = block.first_call + warmup + position
            if not self.check_call(outputs, chosen, block.digests[position], call, answer, stage):
                return

    def check_call(self, outputs: list, chosen: list[list[int]], committed: int, call: int,
                   answer: Callable[[int], Answer], stage: str) -> bool:
        """One chosen call: its parts against the commitment, its chunks against their digests and the answer."""
        if call_digest([part_of_reply(o) for o in outputs]) != committed:
            return self.failed(f"during {stage}: the outputs of timed call {call} are not the ones its process "
                               "committed to when the block ended")
        wrong = self.unlike(outputs, stage, call)
        if wrong:
            return self.failed(f"during {stage}: timed call {call}, chosen after its block ran: {wrong}")
        with self.runner.stage("reveal.take"):
            got = self.taken(outputs, chosen, stage, call)
            changed = self.changed_chunk(outputs, chosen, got)
        if changed is not None:
            index, chunk = changed
            return self.failed(f"during {stage}: chunk {chunk} of {self.like[index].label} of timed call {call} is "
                               "not the one its process committed to when the block ended (changed once the judge "
                               "had chosen it)")
        with self.runner.stage("reveal.answer"):
            expected = answer(call)
        with self.runner.stage("reveal.compare"):
            verdict = self.compared(got, chosen, expected)
        self.checked += 1
        if not verdict.ok:
            return self.failed(f"during {stage}: timed call {call}, chosen after its block ran: {verdict.message}")
        return True

    def failed(self, detail: str) -> bool:
        self.findings.failed("timed-output", detail)
        return False

    def unlike(self, outputs: list, stage: str, call: int) -> str | None:
        """Why the call's outputs are not what the timed configuration returns (their kinds, dtypes, shapes), in
        compare's words; None if they are. A tensor committed in other chunks than its shape has is the
        runner's fault: RunnerMisbehaved."""
        if len(outputs) != len(self.like):
            return f"returned {len(outputs)} outputs, expected {len(self.like)}"
        for output, like in zip(outputs, self.like, strict=True):
            if like.dtype is None:
                if output.kind != "value":
                    return f"{like.label} is a tensor, expected a {like.type_name}"
                continue
            if output.kind != "chunked":
                return f"{like.label} is a {output.type}, expected a tensor"
            if tuple(output.shape) != like.shape:
                return f"{like.label} has shape {list(output.shape)}, expected {list(like.shape)}"
            if DTYPES[output.dtype] != like.dtype:
                return f"{like.label} has dtype {DTYPES[output.dtype]}, expected {like.dtype}"
            if len(output.digests) != like.chunks:
                raise RunnerMisbehaved(stage, f"{like.label} of timed call {call} was committed in "
                                              f"{len(output.digests)} chunks; its shape has {like.chunks}")
        return None

    def taken(self, outputs: list, chosen: list[list[int]], stage: str, call: int) -> list:
        """The chosen chunks of each output as private tensors (a plain value as it came); RunnerMisbehaved for
        a chunk missing, extra or not the size and dtype its place in the layout has."""
        got = []
        for output, like, chunks in zip(outputs, self.like, chosen, strict=True):
            if like.dtype is None:
                got.append(output.value)
                continue
            if len(output.chunks) != len(chunks):
                raise RunnerMisbehaved(stage, f"{like.label} of timed call {call} came back in {len(output.chunks)} "
                                              f"chunks; the judge asked for {len(chunks)}")
            for slot, chunk in zip(output.chunks, chunks, strict=True):
                start, stop = like.span(chunk)
                if slot.dtype != dtype_name(like.dtype) or list(slot.shape) != [stop - start]:
                    raise RunnerMisbehaved(stage, f"chunk {chunk} of {like.label} of timed call {call} came back "
                                                  f"as {slot.dtype} of shape {list(slot.shape)}; it is "
                                                  f"{stop - start} elements of {dtype_name(like.dtype)}")
            got.append([r.tensor for r in self.runner.take(output.chunks, stage)])
        return got

    def changed_chunk(self, outputs: list, chosen: list[list[int]], got: list) -> tuple[int, int] | None:
        """(output, chunk) of the first chunk whose elements do not have the digest committed for it; None if
        all do (their digests reach the host in one transfer)."""
        places = [(index, chunk, tensor) for index, (like, chunks, tensors) in enumerate(zip(self.like, chosen, got,
                                                                                             strict=True))
                  if like.dtype is not None for chunk, tensor in zip(chunks, tensors, strict=True)]
        if not places:
            return None
        found = torch.stack([chunk_digest(t).to(places[0][2].device) for _, _, t in places]).cpu().tolist()
        for (index, chunk, _), value in zip(places, found, strict=True):
            if value != outputs[index].digests[chunk]:
                return index, chunk
        return None

    def compared(self, got: list, chosen: list[list[int]], expected: Answer) -> Comparison:
        """The chosen chunks against the same elements of the answer (its native-precision answer and rounding
        scale sliced alike), one comparison per output; where one fails, the first chunk that does names it."""
        natives = expected.native if expected.native is not None else []
        scales = expected.magnitude if expected.magnitude is not None else []
        names = expected.labels or []
        mine, refs, wides, mags, labels = [], [], [], [], []
        for index, like in enumerate(self.like):
            labels.append(names[index] if index < len(names) else like.label)
            native = natives[index] if index < len(natives) else None
            scale = scales[index] if index < len(scales) else None
            if like.dtype is None:
                mine.append(got[index])
                refs.append(expected.answer[index])
                wides.append(native)
                mags.append(None)
                continue
            device = got[index][0].device if got[index] else torch.device("cpu")
            spans = [like.span(chunk) for chunk in chosen[index]]
            mine.append(torch.cat(got[index]) if got[index] else torch.empty(0, dtype=like.dtype))
            refs.append(_sliced(expected.answer[index], spans, device))
            wides.append(_sliced(native, spans, device))
            mags.append(_sliced(scale, spans, device, like.shape))
        verdict = compare(mine, refs, wides, self.rtol, self.atol, labels=labels, magnitude=mags)
        if verdict.ok:
            return verdict
        for index, like in enumerate(self.like):  # rare: the failing chunk, to say where its first mismatch is
            if like.dtype is None:
                continue
            start = 0
            for chunk in chosen[index]:
                begin, end = like.span(chunk)
                here = slice(start, start + end - begin)
                start = here.stop
                one = compare([mine[index][here]], [refs[index][here]], [_part(wides[index], here)], self.rtol,
                              self.atol, labels=[f"{labels[index]} from flattened element {begin}"],
                              magnitude=[_part(mags[index], here)])
                if not one.ok:
                    verdict.message, verdict.first_mismatch = one.message, one.first_mismatch
                    return verdict
        return verdict


def _part(value: torch.Tensor | None, here: slice) -> torch.Tensor | None:
    return value[here] if value is not None else None


def _sliced(value, spans: list[tuple[int, int]], device: torch.device, shape: tuple[int, ...] | None = None):
    """The elements of `spans` of a tensor's flattened values, on `device` (only those move); None for a value
    that is not a tensor, or not of `shape` where one is given."""
    if not isinstance(value, torch.Tensor) or (shape is not None and tuple(value.shape) != shape):
        return None
    flat = value.reshape(-1)
    pieces = [flat[start:stop] for start, stop in spans]
    joined = torch.cat(pieces) if pieces else flat[:0]
    return joined.to(device)
