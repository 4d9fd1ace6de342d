"""Streaming writers: rows go to disk in batches, so an export never holds the dataset in memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

BATCH_ROWS = 20_000


def _batches(rows: Iterable[dict], size: int) -> Iterator[list[dict]]:
    batch: list[dict] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def write_jsonl(rows: Iterable[dict], path: Path, progress=None) -> int:
    count = 0
    with path.open("wb") as out:
        for batch in _batches(rows, BATCH_ROWS):
            out.write(b"".join(orjson.dumps(row, default=str) + b"\n" for row in batch))
            count += len(batch)
            if progress:
                progress(count)
    return count


def write_parquet(rows: Iterable[dict], path: Path, schema: pa.Schema, progress=None) -> int:
    count = 0
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        for batch in _batches(rows, BATCH_ROWS):
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            count += len(batch)
            if progress:
                progress(count)
        if count == 0:
            writer.write_table(schema.empty_table())
    return count
