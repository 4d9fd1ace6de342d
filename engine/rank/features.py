"""The ranker's input: one fixed-length vector per candidate, from static features and code tokens.

The static analysis grows new keys over time, so the set is open: a model's feature names are the
numeric keys seen in its training data, frozen into `RankerModel.feature_names`. At scoring time
the stored names decide the columns; an unknown key is ignored and a missing one reads 0 with its
`:missing` indicator set to 1, so old models keep working on new diagnostics and vice versa.
Static values go through a signed log1p: shared-memory bytes and register counts live on
different scales, and ratios, not differences, are what matter for speed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from engine.rank.tokens import HASH_PREFIX, SOURCE_PREFIX, TOKEN_PREFIX, token_feature_names, token_features

FEATURE_SCHEME = "rank-features/1"
STATIC_PREFIX = "static:"
MISSING_SUFFIX = ":missing"


class HasFeatures(Protocol):
    source: str
    features: Mapping[str, Any]


@dataclass(frozen=True)
class FeatureInput:
    """A candidate that is not (yet) in the database: its source and any static features."""

    source: str
    features: Mapping[str, Any] = field(default_factory=dict)


def numeric_static(features: Mapping[str, Any], prefix: str = "") -> dict[str, float]:
    """The finite numeric values of a (possibly nested) feature dict; booleans count as 0/1."""
    out: dict[str, float] = {}
    for key, value in features.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(numeric_static(value, prefix=name + "."))
        elif isinstance(value, bool) or isinstance(value, int | float) and math.isfinite(value):
            out[name] = float(value)
    return out


def first_number(features: Mapping[str, Any], keys: Sequence[str]) -> float | None:
    """The first of `keys` present as a number: analysers name the same quantity differently."""
    values = numeric_static(features or {})
    return next((values[k] for k in keys if k in values), None)


def static_keys(feature_dicts: Iterable[Mapping[str, Any]]) -> list[str]:
    """The sorted union of numeric keys: sorting makes the name list stable across runs."""
    keys: set[str] = set()
    for features in feature_dicts:
        keys.update(numeric_static(features))
    return sorted(keys)


def feature_names(keys: Sequence[str]) -> list[str]:
    """Each static key with its missing-indicator, then the fixed code-token features."""
    names: list[str] = []
    for key in keys:
        names += [STATIC_PREFIX + key, STATIC_PREFIX + key + MISSING_SUFFIX]
    return names + token_feature_names()


def signed_log1p(value: float) -> float:
    return math.copysign(math.log1p(abs(value)), value)


def vectorize(items: Sequence[HasFeatures], names: Sequence[str]) -> np.ndarray:
    """An (items × names) float32 matrix; columns follow `names` exactly."""
    column = {name: i for i, name in enumerate(names)}
    matrix = np.zeros((len(items), len(names)), dtype=np.float32)
    missing_cols = [i for name, i in column.items() if name.startswith(STATIC_PREFIX) and name.endswith(MISSING_SUFFIX)]
    matrix[:, missing_cols] = 1.0
    for row, item in enumerate(items):
        for key, value in numeric_static(item.features or {}).items():
            j = column.get(STATIC_PREFIX + key)
            if j is not None:
                matrix[row, j] = signed_log1p(value)
                k = column.get(STATIC_PREFIX + key + MISSING_SUFFIX)
                if k is not None:
                    matrix[row, k] = 0.0
        for name, value in token_features(item.source or "").items():
            j = column.get(name)
            if j is not None:
                matrix[row, j] = value
    return matrix


def feature_group(name: str) -> str:
    """The unit of importance: a static key with its indicator, a named token, the hashed bag, size."""
    if name.startswith(STATIC_PREFIX):
        return name.removesuffix(MISSING_SUFFIX)
    if name.startswith(HASH_PREFIX):
        return "code:hashed-identifiers"
    if name.startswith(SOURCE_PREFIX):
        return "code:size"
    if name.startswith(TOKEN_PREFIX):
        return name
    return name
