"""Load `history/*.parquet` into DataFrames and derive the committed views every check uses.

Derived frames are lazy plans over the raw ones (so the checks stay pure functions of the
history); `persist` materialises the expensive ones once per run.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

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
    """Raw history frames, then derived ones:

    - `committed_input`: input records below the group's committed offset of their
      partition, with `is_first` (lowest partition/offset of its event id) and `expected`
      (the account's balance after this record: sum of first-occurrence amounts so far).
    - `committed_output`: outputs whose input position is committed, joined with that input
      record (`in_event_id`, `in_account`, `in_amount`, `expected`, `sent_ms`; all null if
      the position holds no committed input record), and `is_first_output` (the lowest
      output partition/offset of its event id).
    - `missing_output`: first occurrences of committed input with no committed output.
    """

    input: DataFrame
    output: DataFrame
    changelog: DataFrame
    accounts: DataFrame
    offsets: DataFrame
    traces: DataFrame
    ops: DataFrame
    committed_input: DataFrame
    committed_output: DataFrame
    missing_output: DataFrame

    def persist(self) -> int:
        """Materialise the derived frames; returns the number of committed input records."""
        for name in ("committed_input", "committed_output", "missing_output"):
            getattr(self, name).persist(StorageLevel.MEMORY_AND_DISK)
        n = self.committed_input.count()
        self.committed_output.count()
        return n

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


def _committed_limit(offsets: DataFrame) -> DataFrame:
    # No commit for a partition means nothing of it is committed.
    return offsets.select(
        F.col("partition").alias("_cp"),
        F.coalesce(F.col("committed"), F.lit(0)).alias("_committed"),
    )


def committed_input(input_: DataFrame, offsets: DataFrame) -> DataFrame:
    limit = F.broadcast(_committed_limit(offsets))
    committed = input_.join(limit, input_["partition"] == limit["_cp"]).where(
        F.col("offset") < F.col("_committed")
    )
    by_event = Window.partitionBy("event_id").orderBy("partition", "offset")
    # Accounts are keys, so an account's records are in one partition; ROWS frame because
    # offsets are unique within a partition and it is cheaper than the default RANGE.
    by_account = (
        Window.partitionBy("partition", "account")
        .orderBy("offset")
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    first = F.row_number().over(by_event) == 1
    return (
        committed.drop("_cp", "_committed")
        .withColumn("is_first", first)
        .withColumn(
            "expected",
            F.sum(F.when(F.col("is_first"), F.col("amount")).otherwise(F.lit(0))).over(by_account),
        )
    )


def committed_output(output: DataFrame, offsets: DataFrame, cin: DataFrame) -> DataFrame:
    limit = F.broadcast(_committed_limit(offsets))
    outs = output.join(limit, output["in_partition"] == limit["_cp"]).where(
        F.col("in_offset") < F.col("_committed")
    )
    inp = cin.select(
        F.col("partition").alias("_ip"),
        F.col("offset").alias("_io"),
        F.col("event_id").alias("in_event_id"),
        F.col("account").alias("in_account"),
        F.col("amount").alias("in_amount"),
        F.col("expected"),
        F.col("timestamp_ms").alias("sent_ms"),
    )
    joined = outs.join(
        inp,
        (outs["in_partition"] == inp["_ip"]) & (outs["in_offset"] == inp["_io"]),
        "left",
    )
    first = Window.partitionBy("event_id").orderBy("partition", "offset")
    return joined.drop("_cp", "_committed", "_ip", "_io").withColumn(
        "is_first_output", F.row_number().over(first) == 1
    )


def missing_output(cin: DataFrame, cout: DataFrame) -> DataFrame:
    firsts = cin.where(F.col("is_first"))
    return firsts.join(cout.select("event_id"), "event_id", "left_anti")


def load_frames(spark: SparkSession, history_dir: Path) -> Frames:
    raw = read_history(spark, history_dir)
    return derive(raw)


def derive(raw: dict[str, DataFrame]) -> Frames:
    cin = committed_input(raw["input"], raw["offsets"])
    cout = committed_output(raw["output"], raw["offsets"], cin)
    return Frames(
        input=raw["input"],
        output=raw["output"],
        changelog=raw["changelog"],
        accounts=raw["accounts"],
        offsets=raw["offsets"],
        traces=raw["traces"],
        ops=raw["ops"],
        committed_input=cin,
        committed_output=cout,
        missing_output=missing_output(cin, cout),
    )


def trace_field(name: str) -> Column:
    """A field of the trace line (`data` holds the whole JSON line)."""
    return F.get_json_object(F.col("data"), f"$.{name}")
