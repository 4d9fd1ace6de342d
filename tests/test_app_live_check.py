"""When an open Run (live) page is drawn again: only when the run changed, and the database asked rarely."""

from __future__ import annotations

from app.components.live_check import REDRAW_EVERY_S, STATUS_EVERY_S, LiveCheck

VERSION = ("running", 3, 3, 7)


class Reads:
    """A stand-in for the database read of a run's fingerprint that counts its calls."""

    def __init__(self, version: tuple | None = VERSION) -> None:
        self.version, self.calls = version, 0

    def __call__(self) -> tuple | None:
        self.calls += 1
        return self.version


def test_checks_with_nothing_new_read_nothing_and_ask_for_no_redraw() -> None:
    check, reads = LiveCheck.drawn(7, VERSION, now=100.0), Reads()
    ticks = [100.0 + 0.25 * i for i in range(int(STATUS_EVERY_S / 0.25))]
    assert not any(check.due(7, now, reads) for now in ticks)
    assert reads.calls == 0


def test_a_new_event_asks_for_a_redraw_without_reading_the_database() -> None:
    check, reads = LiveCheck.drawn(7, VERSION, now=100.0), Reads()
    assert check.due(8, 100.0 + REDRAW_EVERY_S, reads)
    assert reads.calls == 0


def test_the_fingerprint_is_read_every_few_seconds_and_a_change_without_an_event_redraws() -> None:
    check, reads = LiveCheck.drawn(7, VERSION, now=100.0), Reads(("finished", 3, 3, 7))
    assert not check.due(7, 100.0 + STATUS_EVERY_S / 2, reads)
    assert reads.calls == 0
    assert check.due(7, 100.0 + STATUS_EVERY_S, reads)
    assert reads.calls == 1


def test_an_unchanged_fingerprint_is_read_once_per_interval_and_asks_for_nothing() -> None:
    check, reads = LiveCheck.drawn(7, VERSION, now=100.0), Reads()
    ticks = [100.0 + 0.5 * i for i in range(1, int(3 * STATUS_EVERY_S / 0.5) + 1)]
    assert not any(check.due(7, now, reads) for now in ticks)
    assert reads.calls == 3


def test_a_run_that_vanished_redraws_so_that_the_page_can_say_so() -> None:
    check = LiveCheck.drawn(7, VERSION, now=100.0)
    assert check.due(7, 100.0 + STATUS_EVERY_S, Reads(None))


def test_redraws_wait_for_the_last_one_to_be_old_enough_while_rounds_stream() -> None:
    check, reads = LiveCheck.drawn(7, VERSION, now=100.0), Reads()
    assert not check.due(8, 100.0 + REDRAW_EVERY_S / 2, reads)
    assert not check.due(9, 100.0 + REDRAW_EVERY_S * 0.9, reads)  # still pending, still too soon
    assert check.due(9, 100.0 + REDRAW_EVERY_S, reads)
    assert reads.calls == 0


def test_streamlit_runs_no_full_garbage_collection_after_each_check() -> None:
    """Its default, a full collection after every script run, costs 80 ms of CPU a check with our imports."""
    import tomllib
    from pathlib import Path

    config = tomllib.loads((Path(__file__).resolve().parents[1] / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
