"""Engine and sessions from one URL: a SQLite file by default (WAL, busy timeout), PostgreSQL by URL.

Schema changes go through Alembic; `init_db` upgrades to head so a fresh file and an old one end
up identical.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import event
from sqlalchemy.engine import Engine
from sqlmodel import Session, create_engine

SQLITE_BUSY_TIMEOUT_MS = 30_000


def _tune_sqlite(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(url: str) -> Engine:
    """A new engine for `url`; SQLite files get their folder created and the WAL pragmas."""
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        if path and path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})
        event.listen(engine, "connect", _tune_sqlite)
        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return create_engine(url, pool_pre_ping=True)


def migrate(engine: Engine) -> None:
    """Upgrade the database behind `engine` to the newest Alembic revision."""
    from alembic import command
    from alembic.config import Config

    migrations = Path(__file__).parent / "migrations"
    config = Config()
    config.set_main_option("script_location", str(migrations))
    # configparser interpolates "%": URLs with encoded options need it doubled.
    config.set_main_option("sqlalchemy.url", engine.url.render_as_string(hide_password=False).replace("%", "%%"))
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")


_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()  # two threads opening one database must not both run the migrations


def get_engine(url: str | None = None) -> Engine:
    """The process-wide engine for `url` (default: the settings' database), migrated on first use."""
    if url is None:
        from engine.settings import get_settings

        url = get_settings().resolved_database_url
    engine = _ENGINES.get(url)
    if engine is None:
        with _ENGINES_LOCK:
            if url not in _ENGINES:
                created = make_engine(url)
                migrate(created)
                _ENGINES[url] = created
            engine = _ENGINES[url]
    return engine


def reset_engines() -> None:
    """Dispose and forget cached engines (tests switch databases between cases)."""
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.dispose()
        _ENGINES.clear()


@contextmanager
def session_scope(url: str | None = None) -> Iterator[Session]:
    """A session that commits on success and rolls back on error; objects stay readable after."""
    with Session(get_engine(url), expire_on_commit=False) as session:
        try:
            yield session
            session.commit()
        except Exception:
            session.rollback()
            raise
