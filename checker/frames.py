"""Load `history/*.parquet` into DataFrames, with the derived per-event view the checks use.

Derived frames are lazy plans over the raw ones (so the checks stay pure functions of the
history); `Frames.tally` computes the expensive one once per run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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
    pa.binary(): "BINARY",
    pa.bool_(): "BOOLEAN",
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
    windows: DataFrame
    sessions: DataFrame
    traces: DataFrame
    ops: DataFrame
    events: DataFrame
    # Any app's topics and the reference's output (checker/oracle); empty for a ledger run
    # without the oracle.
    app_input: DataFrame
    app_output: DataFrame
    reference: DataFrame
    reference_alt: DataFrame
    # Rows of `events` matching each named predicate (Frames.tally).
    tallies: dict[str, int] = field(default_factory=dict, compare=False)
    # What one check computed for another that reads the same judgments (the window
    # checks judge every window once, then each reports its class): key -> value.
    shared: dict[object, object] = field(default_factory=dict, compare=False)

    def tally(self, predicates: Mapping[str, Column] | None = None) -> int:
        """Count, in one job over `events`, the committed input records and the rows that
        match each of `predicates`; returns the former. Every check that reads the view
        has its tally here, and most end at a count of 0: a sound run computes the view
        once and keeps none of it. Only when a count is not 0 is the view cached, for the
        checks that then read it again for their examples (not caching it took 8 s off the
        41 s the view of 10M events took, warm, in bench_checker_profile.py)."""
        named = dict(predicates or {})
        row = self.events.agg(
            F.sum("occurrences").alias("_n"),
            *(F.count_if(p).alias(f"_t{i}") for i, p in enumerate(named.values())),
        ).collect()[0]
        self.tallies.update({name: int(row[f"_t{i}"]) for i, name in enumerate(named)})
        if any(self.tallies.values()):
            self.events.persist(StorageLevel.MEMORY_AND_DISK)
        return int(row["_n"] or 0)

    def count_events(self, name: str, predicate: Column) -> int:
        """Rows of `events` matching `predicate`: the tally `tally` took under `name`,
        or a count of its own if it took none."""
        if name in self.tallies:
            return self.tallies[name]
        return self.events.where(predicate).count()

    def unpersist(self) -> None:
        self.events.unpersist()


def damaged_history_file(history_dir: Path) -> str | None:
    """The first history file whose Parquet footer cannot be read, and why. Spark would
    report it as a failed task's stack traces; a user needs the file's name."""
    import pyarrow.parquet as pq

    for stem in HISTORY_FILES:
        path = history_dir / f"{stem}.parquet"
        for part in sorted(path.rglob("*.parquet")) if path.is_dir() else [path]:
            if not part.exists():
                continue
            try:
                pq.read_metadata(part)
            except (OSError, ValueError) as exc:  # ArrowInvalid is a ValueError
                return f"{part} is damaged ({str(exc).splitlines()[0]})"
    return None


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
        windows=raw["windows"],
        sessions=raw["sessions"],
        traces=raw["traces"],
        ops=raw["ops"],
        events=events_view(raw["input"], raw["output"], raw["offsets"], raw["accounts"]),
        app_input=raw["app_input"],
        app_output=raw["app_output"],
        reference=raw["reference"],
        reference_alt=raw["reference_alt"],
    )


def trace_field(name: str) -> Column:
    """A field of the trace line (`data` holds the whole JSON line)."""
    return F.get_json_object(F.col("data"), f"$.{name}")
