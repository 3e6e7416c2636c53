"""Append rows to a Parquet file in bounded batches, so collection never holds a topic."""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_BATCH_ROWS = 50_000


class ParquetSink:
    """`with ParquetSink(path, schema) as sink: sink.add(row)`. Rows are dicts keyed by
    the schema's column names; at most `batch_rows` are buffered. The file is written to
    a temporary name and renamed on a clean exit, so a reader never sees half a file; an
    empty file (with the schema) is still written when no row came."""

    def __init__(self, path: Path, schema: pa.Schema, batch_rows: int = DEFAULT_BATCH_ROWS):
        self.path = path
        self.schema = schema
        self.batch_rows = batch_rows
        self.rows = 0
        self._buffer: list[dict[str, Any]] = []
        self._tmp = path.with_name(path.name + ".tmp")
        self._writer: pq.ParquetWriter | None = None

    def __enter__(self) -> ParquetSink:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(self._tmp, self.schema, compression="zstd")
        return self

    def add(self, row: dict[str, Any]) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= self.batch_rows:
            self.flush()

    def flush(self) -> None:
        if self._buffer and self._writer is not None:
            self._writer.write_batch(pa.RecordBatch.from_pylist(self._buffer, self.schema))
            self.rows += len(self._buffer)
            self._buffer = []

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.flush()
        if self._writer is not None:
            self._writer.close()
        if exc_type is None:
            self._tmp.replace(self.path)
        else:
            self._tmp.unlink(missing_ok=True)
