"""Typed records read back from their stored JSON, with the dataclass itself as the only schema.

Stored rows outlive the code that wrote them: a row from before a field existed lacks it, and one
written since may carry keys this code does not know (or properties `to_json` adds for other
readers). So decoding forgives both, the same way for every record: unknown keys are dropped; a
missing field takes its default, else the empty value of its type (0, "", None, [], a record of
defaults); and JSON's lists and string keys turn back into the tuples and int keys the annotations
name. One decoder for all records keeps a record's fields as the one place its schema is written.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import types
import typing
from typing import Any, TypeVar

T = TypeVar("T")
_UNIONS = (typing.Union, types.UnionType)


def from_json(cls: type[T], data: Any) -> T:
    """`cls` (a dataclass) from its `asdict` form; anything but a dict reads as an empty row."""
    return _record(cls, data if isinstance(data, dict) else {})


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _record(cls: type[T], data: dict) -> T:
    hints = _hints(cls)
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        if f.name in data:
            values[f.name] = _decode(hints[f.name], data[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            values[f.name] = _empty(hints[f.name])
    return cls(**values)


def _members(tp: Any) -> tuple[Any, ...]:
    return tuple(a for a in typing.get_args(tp) if a is not type(None))


def _decode(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in _UNIONS:
        if value is None:
            return None if type(None) in typing.get_args(tp) else _empty(tp)
        members = _members(tp)
        if len(members) > 1 and any(isinstance(value, m) for m in members if isinstance(m, type)):
            return value  # int | float and the like: the stored value is already one of them
        return _decode(members[0], value)
    if value is None:
        return _empty(tp)
    if dataclasses.is_dataclass(tp):
        return _record(tp, value) if isinstance(value, dict) else _empty(tp)
    if origin is not None:
        return _container(tp, origin, value)
    return _scalar(tp, value)


def _container(tp: Any, origin: Any, value: Any) -> Any:
    args = typing.get_args(tp)
    if origin is dict:
        if not isinstance(value, dict):
            return {}
        if not args:
            return dict(value)
        decoded = {}
        for key, item in value.items():
            try:
                decoded[_scalar(args[0], key, strict=True)] = _decode(args[1], item)
            except (TypeError, ValueError):
                continue  # a key the annotation cannot hold (a non-number under dict[int, ...])
        return decoded
    if not isinstance(value, list | tuple):
        return _empty(tp)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in value)
        if args and len(args) != len(value):
            return _empty(tp)
        return tuple(_decode(a, v) for a, v in zip(args, value, strict=True)) if args else tuple(value)
    items = [_decode(args[0], v) for v in value] if args else list(value)
    return set(items) if origin in (set, frozenset) else items


def _scalar(tp: Any, value: Any, strict: bool = False) -> Any:
    try:
        if tp is Any or tp is object:
            return value
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            try:
                return tp(value)
            except ValueError:
                return value  # a class this code no longer names: kept as stored, not lost
        if tp is bool:
            return bool(value)
        if tp in (int, float):
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise TypeError(value)
            return tp(float(value)) if tp is int else float(value)
        if tp is str:
            return str(value)
    except (TypeError, ValueError):
        if strict:
            raise
        return _empty(tp)
    return value


def _empty(tp: Any) -> Any:
    """The value a field of type `tp` has in a row stored before it existed."""
    origin = typing.get_origin(tp)
    if origin in _UNIONS:
        return None if type(None) in typing.get_args(tp) else _empty(_members(tp)[0])
    if dataclasses.is_dataclass(tp):
        return _record(tp, {})
    if origin is tuple:
        args = typing.get_args(tp)
        fixed = args and not (len(args) == 2 and args[1] is Ellipsis)
        return tuple(_empty(a) for a in args) if fixed else ()
    empties = {dict: dict, list: list, set: set, frozenset: frozenset, int: int, float: float, str: str, bool: bool}
    make = empties.get(origin or tp)
    return make() if make else None
