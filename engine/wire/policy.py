"""How trials are run: `TrialPolicy`, the one record of it on every side.

The parent builds it (from the settings, or a caller's choice), the job carries it to the judge, and the
judge plans its blocks from it and runs the same timing loop as the runner (engine.wire.timing). It lives
apart from the loop so the parent side can hold one without importing torch. Imports: the standard
library only.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_FLUSH_BYTES = 256 * 2**20  # several times an H100's or H200's 50 MB L2


@dataclass(frozen=True)
class TrialPolicy:
    """How trials are run: the one record of it, on every side (the parent's options and settings, the job the
    judge gets, the loop the runner and the judge run); its defaults are declared here and nowhere else.

    `done` is the stop rule of one loop: stop when `min_trials` and `min_seconds` are both reached, or at
    `max_trials`, or at `max_seconds` (after `floor_trials`). The judge plans its blocks from the same
    numbers on its own clock and stops early once every side's median is known to `target_ci` (the
    relative half-width of its 95 % confidence interval; 0: time everything the numbers ask for). Every
    trial starts after an L2 flush of `flush_bytes`.
    """

    min_trials: int = 30
    min_seconds: float = 1.0
    max_trials: int = 1000
    max_seconds: float = 10.0
    floor_trials: int = 3  # even a slow kernel gets this many before max_seconds stops it
    flush_bytes: int = DEFAULT_FLUSH_BYTES
    target_ci: float = 0.0

    @classmethod
    def exactly(cls, trials: int, flush_bytes: int = DEFAULT_FLUSH_BYTES) -> TrialPolicy:
        """Exactly `trials` trials, however long they take (a block the judge planned)."""
        return cls(min_trials=trials, min_seconds=0.0, max_trials=trials, max_seconds=1e9, floor_trials=trials,
                   flush_bytes=flush_bytes)

    def done(self, trials: int, elapsed: float) -> bool:
        if trials >= self.max_trials:
            return True
        if trials >= self.min_trials and elapsed >= self.min_seconds:
            return True
        return elapsed >= self.max_seconds and trials >= self.floor_trials
