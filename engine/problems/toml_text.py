"""A value spelled as TOML, for the problem.toml files imports write (tomllib reads TOML but does not write
it; the files are small and flat, so the few spellings they need are here rather than another dependency)."""

from __future__ import annotations

import json


def toml_value(value) -> str:
    if isinstance(value, str):
        return json.dumps(value)  # JSON's escapes are all valid in a TOML basic string
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return repr(value)
