"""Whether an open Run (live) page must be drawn again: decided on each check, cheaply.

An open tab on a running run is checked every CHECK_EVERY_S. A check compares the newest event number
(the watcher's, in memory) with the one last drawn, reads the run's fingerprint from the database only
every STATUS_EVERY_S (a run can end, or be paused, without a new event), and draws nothing itself: when
something changed, the page is drawn again, at most every REDRAW_EVERY_S. A check that finds nothing new
costs Streamlit's bookkeeping for a fragment run and a dictionary lookup, which keeps an open tab from
taking a share of the CPU that the run's own timings need on a small machine (the repository's
`.streamlit/config.toml` also turns off the full garbage collection Streamlit would run after each check).

No Streamlit here, so that the decision can be tested on its own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

CHECK_EVERY_S = 1.0  # how often an open tab asks whether the run changed
STATUS_EVERY_S = 5.0  # how often that question also goes to the database
REDRAW_EVERY_S = 2.0  # at most this often a run that streams rounds quickly has the page drawn again


@dataclass
class LiveCheck:
    """What the page last drew of one run, and when; `due` says on each check whether to draw again."""

    seq: int  # the newest event number drawn
    version: tuple  # the run's fingerprint drawn (`RunProgress.version`)
    drawn_at: float  # monotonic seconds
    status_at: float  # when the fingerprint was last read
    status_every_s: float = STATUS_EVERY_S
    redraw_every_s: float = REDRAW_EVERY_S
    changed: bool = False

    @classmethod
    def drawn(cls, seq: int, version: tuple, now: float) -> LiveCheck:
        """The state right after a full draw of the page."""
        return cls(seq=seq, version=version, drawn_at=now, status_at=now)

    def due(self, seq: int, now: float, read_version: Callable[[], tuple | None]) -> bool:
        """True when the page should be drawn again now.

        `seq` is the newest event number known (free to ask); `read_version` reads the run's fingerprint
        from the database and is only called when no event says that something changed and the last read
        is STATUS_EVERY_S old.
        """
        if seq != self.seq:
            self.changed = True
        elif not self.changed and now - self.status_at >= self.status_every_s:
            self.status_at = now
            self.changed = read_version() != self.version
        return self.changed and now - self.drawn_at >= self.redraw_every_s
