"""How every stored record is read back: one policy, on pydantic, for rows written by any version.

Stored rows outlive the code that wrote them, so a record's stored JSON is read the same way for
every record: keys the record does not hold (written by newer code, or properties `to_json` adds for
other readers) are ignored; an older shape is brought up to date by a named migration that runs
before validation; a missing field takes its declared default; and a value of the wrong type is a
`pydantic.ValidationError` naming the field and the value, never a silently empty one. JSON's lists
and string keys turn back into the tuples, enums and int keys the annotations name.

A leaf (see `engine.schema`): pydantic and the standard library only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import TypeAdapter

T = TypeVar("T")
Migration = Callable[[dict[str, Any]], dict[str, Any]]


@functools.cache
def _adapter(cls: Any) -> TypeAdapter:
    return TypeAdapter(cls)


def migrated(data: Any, migrations: Sequence[Migration]) -> Any:
    """`data` with each migration applied in order (a copy; anything but a dict is left to validation)."""
    if not isinstance(data, dict):
        return data
    data = dict(data)
    for migrate in migrations:
        data = migrate(data)
    return data


def read_record(cls: type[T] | Any, data: Any, migrations: Sequence[Migration] = ()) -> T:
    """`cls` (a dataclass, a pydantic model or a type such as `list[X]`) from its stored JSON."""
    return _adapter(cls).validate_python(migrated(data, migrations))


def renamed(old: str, new: str) -> Migration:
    """A migration for a key stored under an older name: kept under the new one unless that is set."""

    def migrate(data: dict[str, Any]) -> dict[str, Any]:
        if old in data:
            value = data.pop(old)
            if data.get(new) is None:
                data[new] = value
        return data

    migrate.__name__ = f"{old}_renamed_{new}"
    return migrate
