"""Alembic environment: runs on the connection `db.session.migrate` hands over, or on the URL."""

from alembic import context
from sqlalchemy import create_engine
from sqlmodel import SQLModel

import db.models  # noqa: F401  (registers the tables on SQLModel.metadata)

target_metadata = SQLModel.metadata


def _run(connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


connection = context.config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:
    with create_engine(context.config.get_main_option("sqlalchemy.url")).connect() as conn:
        _run(conn)
        conn.commit()
