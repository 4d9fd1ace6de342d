"""Persistence: SQLModel tables, the engine/session factory from one URL, and Alembic migrations.

Nothing outside this package writes SQL; other code goes through `db.session.session_scope()` and
the query helpers in `db.queries`. The bottom layer: db imports neither `app` nor the engine, but for
the engine's leaf record schema (`engine.schema`: what the JSON columns hold, read as records); its
database URL comes from the caller (`db.session.use_database`).
"""
