"""Versioned ranker storage: `$REFINERY_HOME/rankers/v0001/{model.pt, meta.json}` plus a DB row.

The row (version, feature names, training data summary, metrics) is claimed first, the files are
written, then the row is marked ready; readers only see ready versions, so a scorer never loads a
half-written model. Paths are stored relative to the home folder so a copied home keeps working.
The weights are a plain state dict loaded with `weights_only=True`: no pickled code runs on load.
"""

from __future__ import annotations

import json
import math
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from db.labels import (
    RankerModelRow,
    delete_ranker_version,
    finish_ranker_version,
    get_ranker_model,
    list_ranker_models,
    reserve_ranker_version,
)
from engine.rank.features import FEATURE_SCHEME, HasFeatures, vectorize
from engine.rank.model import PairwiseScorer
from engine.settings import get_settings

WEIGHTS_FILE = "model.pt"
META_FILE = "meta.json"


def rankers_dir() -> Path:
    return get_settings().home / "rankers"


def clean_json(value: Any) -> Any:
    """Plain JSON: numpy scalars become Python numbers, NaN/inf become null (PostgreSQL rejects NaN)."""
    if isinstance(value, dict):
        return {str(k): clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@dataclass
class LoadedRanker:
    row: RankerModelRow
    model: PairwiseScorer

    @property
    def version(self) -> int:
        return self.row.version

    @property
    def feature_names(self) -> list[str]:
        return list(self.row.feature_names)

    def score(self, items: Sequence[HasFeatures]) -> np.ndarray:
        return self.model.score(vectorize(items, self.feature_names))


def save_ranker(model: PairwiseScorer, feature_names: Sequence[str], hidden: Sequence[int],
                data: dict[str, Any], metrics: dict[str, Any]) -> RankerModelRow:
    """Store a trained model as the next version and return its ready row."""
    home = get_settings().home
    row = reserve_ranker_version(lambda v: f"rankers/v{v:04d}", feature_names, clean_json(data))
    folder = home / row.path
    try:
        folder.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), folder / WEIGHTS_FILE)
        meta = {"version": row.version, "scheme": FEATURE_SCHEME, "hidden": list(hidden),
                "feature_names": list(feature_names)}
        (folder / META_FILE).write_text(json.dumps(meta, indent=1))
        return finish_ranker_version(row.version, clean_json(metrics), clean_json(data))
    except BaseException:
        delete_ranker_version(row.version)
        shutil.rmtree(folder, ignore_errors=True)
        raise


_CACHE: dict[tuple[str, int, float], LoadedRanker] = {}
_LOCK = threading.Lock()


def load_ranker(version: int | None = None) -> LoadedRanker | None:
    """Version `version` (the newest ready one when None), or None when there is no such model."""
    row = get_ranker_model(version)
    if row is None:
        return None
    folder = get_settings().home / row.path
    weights = folder / WEIGHTS_FILE
    if not weights.exists():
        return None
    key = (str(folder), row.version, weights.stat().st_mtime)
    with _LOCK:
        if key not in _CACHE:
            meta = json.loads((folder / META_FILE).read_text())
            model = PairwiseScorer(len(row.feature_names), tuple(meta["hidden"]))
            model.load_state_dict(torch.load(weights, weights_only=True))
            model.eval()
            _CACHE[key] = LoadedRanker(row=row, model=model)
        return _CACHE[key]


def list_rankers() -> list[RankerModelRow]:
    return list_ranker_models()
