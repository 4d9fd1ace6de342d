"""Persistence: SQLModel tables, the engine/session factory from one URL, and Alembic migrations.

Nothing outside this package writes SQL; other code goes through `db.session.session_scope()` and
the query helpers in `db.queries`.
"""
