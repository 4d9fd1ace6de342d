"""Which database this process uses: the settings' URL, handed to `db` by the entry points.

`db` reads no settings (it sits below the engine); the `refinery` command, the run process, the
dashboard's frame, the benchmarks and the tests' home fixtures call `use_settings_database()` once,
and every `db` helper then opens that database. `db` itself is imported only when this is called,
so importing the engine stays light.
"""

from __future__ import annotations

from engine.settings import Settings, get_settings


def use_settings_database(settings: Settings | None = None) -> str:
    """Point this process's sessions at the settings' database; returns its URL."""
    from db.session import use_database

    url = (settings or get_settings()).resolved_database_url
    use_database(url)
    return url


def open_settings_database(settings: Settings | None = None) -> str:
    """`use_settings_database`, then open it now (migrating it on first use), so that a bad URL fails here."""
    from db.session import get_engine

    url = use_settings_database(settings)
    get_engine(url)
    return url
