"""Engine and sessions from one URL: a SQLite file (WAL, busy timeout) or PostgreSQL.

The URL comes from the caller: db reads no settings, so it imports nothing above it. A process
names its database once, at its entry point, with `use_database(url)` (the `refinery` command,
the run process and the dashboard's frame do it through `engine.store.database.use_settings_database`;
tests through their home fixture). Every helper in db then opens `session_scope()` with no URL,
so the query functions keep short signatures and none of their callers passes a URL around; a
caller that wants another database passes `url` explicitly. Opening a session before any URL was
named is an error, not a silent default.

Schema changes go through Alembic; `migrate` upgrades to head on first use of a URL, so a fresh
file and an old one end up identical.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import event, func, insert
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, create_engine, select

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
_DEFAULT_URL: str | None = None


def use_database(url: str | None) -> str | None:
    """Name the database this process's sessions open when given no URL (None: forget it).

    Returns the one named before, so that a caller switching for a while can switch back.
    """
    global _DEFAULT_URL
    previous, _DEFAULT_URL = _DEFAULT_URL, url
    return previous


def database_url() -> str:
    """The URL `use_database` named; an error if none was."""
    if _DEFAULT_URL is None:
        raise RuntimeError("no database named: the entry point calls db.session.use_database(url) first")
    return _DEFAULT_URL


def get_engine(url: str | None = None) -> Engine:
    """The process-wide engine for `url` (default: the one `use_database` named), migrated on first use."""
    url = url or database_url()
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


def next_id(session: Session, model: type[SQLModel]) -> int:
    """The id the next row of `model` may take where the caller numbers rows itself, so that rows inserted
    together in bulk (`insert_many`) can name each other."""
    return (session.exec(select(func.max(model.id))).one() or 0) + 1


def insert_many(session: Session, model: type[SQLModel], rows: list[dict]) -> None:
    """Insert `rows` (column → value) of `model` in one bulk statement: no objects, no refresh."""
    session.execute(insert(model), rows)
