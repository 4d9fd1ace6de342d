"""How many timed calls the judge checks: about REVEALS_PER_TIMING a timing, at least one a block."""

from __future__ import annotations

from engine.verify.judge.outcome import Findings
from engine.verify.judge.reveal import REVEALS_PER_BLOCK, REVEALS_PER_TIMING, Reveals


def test_before_the_plan_every_block_gets_the_most_and_after_it_the_timing_gets_its_share():
    reveals = Reveals(runner=None, findings=Findings(), rtol=1e-4, atol=1e-5)
    assert reveals.per(20) == REVEALS_PER_BLOCK and reveals.per(1) == 1
    reveals.plan(500)
    blocks = [50] * 10
    assert all(reveals.per(n) >= 1 for n in blocks)
    assert REVEALS_PER_TIMING <= sum(reveals.per(n) for n in blocks) <= 2 * REVEALS_PER_TIMING
    reveals.plan(150)
    assert sum(reveals.per(n) for n in [50, 50, 50]) == REVEALS_PER_TIMING
