"""Load `history/*.parquet` into DataFrames, with the derived per-event view the checks use.

Derived frames are lazy plans over the raw ones (so the checks stay pure functions of the
history); `persist` materialises the expensive one once per run.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from checker.ledger import events_view
from checker.schema import HISTORY_FILES

_SPARK_TYPES = {
    pa.int32(): "INT",
    pa.int64(): "BIGINT",
    pa.string(): "STRING",
}


def spark_ddl(schema: pa.Schema) -> str:
    return ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in schema)


@dataclass(frozen=True)
class Frames:
    """Raw history frames, plus `events`: one row per (account, event id) of committed
    input or committed output (see checker/ledger.py for its columns)."""

    input: DataFrame
    output: DataFrame
    changelog: DataFrame
    accounts: DataFrame
    offsets: DataFrame
    traces: DataFrame
    ops: DataFrame
    events: DataFrame

    def persist(self) -> int:
        """Materialise `events`; returns the number of committed input records."""
        self.events.persist(StorageLevel.MEMORY_AND_DISK)
        row = self.events.agg(F.sum("occurrences").alias("n")).collect()[0]
        return int(row["n"] or 0)

    def unpersist(self) -> None:
        for f in fields(self):
            getattr(self, f.name).unpersist()


def read_history(spark: SparkSession, history_dir: Path) -> dict[str, DataFrame]:
    """A missing file reads as an empty frame (e.g. a run whose pods left no trace)."""
    out: dict[str, DataFrame] = {}
    for stem, schema in HISTORY_FILES.items():
        path = history_dir / f"{stem}.parquet"
        ddl = spark_ddl(schema)
        if path.exists():
            out[stem] = spark.read.schema(ddl).parquet(str(path))
        else:
            out[stem] = spark.createDataFrame([], ddl)
    return out


def load_frames(spark: SparkSession, history_dir: Path) -> Frames:
    return derive(read_history(spark, history_dir))


def derive(raw: dict[str, DataFrame]) -> Frames:
    return Frames(
        input=raw["input"],
        output=raw["output"],
        changelog=raw["changelog"],
        accounts=raw["accounts"],
        offsets=raw["offsets"],
        traces=raw["traces"],
        ops=raw["ops"],
        events=events_view(raw["input"], raw["output"], raw["offsets"]),
    )


def trace_field(name: str) -> Column:
    """A field of the trace line (`data` holds the whole JSON line)."""
    return F.get_json_object(F.col("data"), f"$.{name}")
