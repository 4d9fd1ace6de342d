"""Checking timed calls the runner could not predict: after each block of timed calls, the judge draws a
few of them at random and asks for their outputs, which must match the digest the runner committed to at
the end of the block (inside the judge's clock) and the judge's own answer on that call's fresh values.

A candidate that works only on the calls it expects to be checked, or returns a remembered result, cannot
know which calls these are; one that works out an answer only once asked has either committed to another
digest or spent the time inside the block, where the judge's clock sees it (`wire.fresh` says more).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from engine.verify.judge.correctness import compare
from engine.verify.judge.outcome import Findings
from engine.verify.judge.session import RunnerMisbehaved, RunnerSession
from engine.wire.fresh import digest

REVEALS_PER_TIMING = 6  # checked calls a timing: a candidate skipping a fifth of its calls is caught with a
# probability of 1 - 0.8**6 = 0.74, one skipping half with 0.98, and skipping gains only what it skips. Spread over
# the timing's blocks in proportion to their calls (at least one a block): a block's checked calls cost the judge a
# reference call and a transfer of the outputs each, which at two a block cost more than the timed calls on large
# outputs. The candidate learns neither which blocks nor which calls until each block has run.
REVEALS_PER_BLOCK = 2  # at most, and before the timing's calls are planned (its warm-up and calibration blocks)


@dataclass
class Answer:
    """What one call should have returned: the answer compared against, the native-precision answer that sets
    the rounding allowance (None: the answer is in native precision), and the outputs' names."""

    answer: list
    native: list | None = None
    labels: list[str] | None = None
    magnitude: list | None = None  # the honest rounding scale of each output (correctness.compare)


class Reveals:
    """The judge's side of the check, for one job."""

    def __init__(self, runner: RunnerSession, findings: Findings, rtol: float, atol: float,
                 per_block: int = REVEALS_PER_BLOCK) -> None:
        self.runner, self.findings, self.rtol, self.atol, self.per_block = runner, findings, rtol, atol, per_block
        self.random = random.SystemRandom()  # nothing the candidate's process could have seen or seeded
        self.checked = 0
        self.rate: float | None = None  # checked calls per timed call, once the timing's calls are planned

    def plan(self, calls: int) -> None:
        """The timing will make about `calls` timed calls from here on: check REVEALS_PER_TIMING of them."""
        self.rate = REVEALS_PER_TIMING / max(calls, 1)

    def per(self, count: int) -> int:
        """How many of a block's `count` calls to check."""
        if self.rate is None:
            return min(self.per_block, count)
        return min(count, self.per_block, max(1, round(self.rate * count)))

    def check(self, block, warmup: int, answer: Callable[[int], Answer], stage: str) -> None:
        """Draw calls of `block` (whose first call is `block.first_call`, after `warmup` untimed ones), ask for
        their outputs and check each against the commitment and `answer(call number)`."""
        count = len(block.times_us)
        earlier = self.findings.items.get("timed-output")
        if count == 0 or (earlier is not None and not earlier.passed):
            return
        positions = sorted(self.random.sample(range(count), self.per(count)))
        reply = self.runner.request("reveal", stage=stage, positions=positions)
        returned = self.runner.take(reply.outputs, stage)
        per_call = list(reply.per_call)
        if len(per_call) != len(positions) or sum(per_call) != len(returned):
            raise RunnerMisbehaved(stage, "the outputs of the timed calls the judge chose did not come back")
        start = 0
        for position, outputs in zip(positions, per_call, strict=True):
            got = [r.tensor if r.tensor is not None else r.value for r in returned[start:start + outputs]]
            start += outputs
            call = block.first_call + warmup + position
            if digest(got) != block.digests[position]:
                self.findings.failed("timed-output", f"during {stage}: the outputs of timed call {call} are not the "
                                                     "ones its process committed to when the block ended")
                return
            expected = answer(call)
            verdict = compare(got, expected.answer, expected.native, self.rtol, self.atol, labels=expected.labels,
                              magnitude=expected.magnitude)
            self.checked += 1
            if not verdict.ok:
                self.findings.failed("timed-output", f"during {stage}: timed call {call}, chosen after its block "
                                                     f"ran: {verdict.message}")
                return
