"""What the oracle judges of an exactly-once run with the record cache on (docs/your-app.md,
"The record cache").

The cache holds a store's updates and sends a key's latest downstream when it is flushed:
on commit, on eviction, or when it is full. Between two flushes a key's updates collapse into
its last, so the committed output of a key is some of the values the reference produced for
it (TopologyTestDriver flushes after every record), in no sequence of the input's alone; at
the end of a drained run the last commit has flushed every store, so each key's last
committed value is the reference's last. Judged, per output topic and key:

- every committed value is one the reference also produced for that key;
- the last committed value (by partition and offset) is the reference's last, and every
  key the reference produced is committed, but one whose last value is a tombstone: a key
  made and deleted between two flushes is never sent (a session merged into a longer one).

Not judged: each update and their order (how many collapse is the cache's size and the
commit's timing). A topology without a state store has nothing to cache: the update-by-update
comparison stays for it.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from checker.frames import Frames
from checker.model import CheckResult
from checker.oracle.compare import (
    NULL,
    cluster_side,
    compared,
    key_examples,
    keyed,
    reference_side,
)
from checker.oracle.reference import OracleSettings

ONE_OF_THE_REFERENCE = "every committed value one the reference produced for its key"
LAST_IS_LAST = "each key's last committed value the reference's last"


def cached_anomalies(actual: DataFrame, expected: DataFrame) -> DataFrame:
    """One row per (topic, key) of keyed sides (`topic, kx, vx, pos`) that breaks what a
    cached app promises: `kind` (`lost`: a key never committed, unless the reference ends
    it with a tombstone: a key made and deleted between two flushes is never sent;
    `changed`: values the reference never produced for it, `extra` of them; `last`: its
    last committed value is not the reference's last), `extra`."""
    def last(side: DataFrame, name: str) -> DataFrame:
        return side.groupBy("topic", "kx").agg(F.max_by("vx", "pos").alias(name))

    foreign = (actual.join(expected.select("topic", "kx", "vx").distinct(),
                           ["topic", "kx", "vx"], "left_anti")
               .groupBy("topic", "kx").agg(F.count("*").alias("extra")))
    extra = F.coalesce(F.col("extra"), F.lit(0))
    kind = (F.when(F.col("a_last").isNull() & (F.col("e_last") != NULL), "lost")
            .when(extra > 0, "changed")
            .when(F.col("a_last") != F.col("e_last"), "last"))
    return (last(expected, "e_last").join(last(actual, "a_last"), ["topic", "kx"], "full")
            .join(foreign, ["topic", "kx"], "left")
            .select("topic", "kx", kind.alias("kind"), extra.alias("extra"))
            .where(F.col("kind").isNotNull()))


def judge_cached(frames: Frames, settings: OracleSettings) -> CheckResult:
    ignore = settings.ignore_json_fields
    cluster = cluster_side(frames.app_output, settings.sinks)
    anomalies = cached_anomalies(keyed(cluster, ignore),
                                 keyed(reference_side(frames.reference), ignore))
    tally = anomalies.groupBy("kind").agg(F.count("*").alias("keys"),
                                          F.sum("extra").alias("extra")).collect()
    sinks = ", ".join(settings.sinks)
    details: dict[str, Any] = {
        "record_cache_bytes": settings.record_cache_bytes,
        "judged": [f"{ONE_OF_THE_REFERENCE} ({sinks})", f"{LAST_IS_LAST} ({sinks})"],
        "not_judged": [f"each update and their order: the record cache "
                       f"({settings.record_cache_bytes} bytes) collapses a key's updates "
                       "between flushes"],
        "keys": {r["kind"]: int(r["keys"]) for r in tally},
        "extra_records": int(sum(r["extra"] for r in tally)),
        **compared(cluster, settings.sinks, ignore),
    }
    if not tally:
        return CheckResult(valid=True, details=details)
    examples = key_examples(anomalies, frames.app_output, frames.reference, ignore,
                            lambda row, committed, expected: {
                                "extra": int(row["extra"]),
                                "committed_last": committed[-1]["value"] if committed else None,
                                "expected_last": expected[-1]["value"] if expected else None})
    return CheckResult(valid=False, count=sum(int(r["keys"]) for r in tally),
                       examples=examples, details=details)
