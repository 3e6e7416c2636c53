"""Window and session checks: the ledger app's windowed state against its committed input.

Each window's or session's committed value (the last record of it in its output topic) is
the count and sum of its account's input records that Kafka Streams let into it. Which
records those are follows the run's own geometry (meta `windows`: workloads/ledger/
windowed.py) and each task's stream time, as Kafka Streams decides it: a record updates a
window whose end is past its task's stream time less the grace (the partition's largest
timestamp up to that record: one input partition a task). A record that was late then may
still have been counted after a restart (the aggregation's stream time starts over in the
processor), so each window has a least and a most: what its on-time records add up to,
and what all of them do. Only input below the group's committed offsets is counted: under
exactly-once the committed outputs are exactly what it produced.

- window-lost-history: a window below its least, or missing; a session that is missing,
  lower, or only part of what its records make (both guarantees: a store that went back).
- window-wrong: a window above its most, or with no committed input; a session above its
  records, merged across a gap, an earlier version of it left live, or one with no
  committed input (exactly-once; under at-least-once a redelivery counts twice and a
  withdrawal can be lost, so these are counted but allowed).

Sessions are judged for accounts none of whose records could have been late (sessions
merge across late records in ways the order alone does not fix); the others are counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checker.frames import Frames
from checker.ledger import committed_input
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, CheckResult, not_applicable
from workloads.ledger.windowed import WindowSpec

NO_WINDOWS = ("this system under test keeps no windows or sessions (the Kafka Streams "
              "ledger app does)")
TOLERATED_NOTE = ("at-least-once: a redelivered record is aggregated again, so a window or "
                  "session above its records is allowed")
LOST, WRONG = "lost", "wrong"
_EXAMPLE_COLS = ("kind", "account", "start", "end", "count", "sum", "least_count",
                 "most_count", "least_sum", "most_sum", "reason", "out_partition", "out_offset")


def spec_of(meta: Meta) -> WindowSpec | None:
    raw = meta.raw.get("windows")
    return WindowSpec.from_json(dict(raw)) if isinstance(raw, Mapping) else None


def _with_stream_time(input_: DataFrame) -> DataFrame:
    """Each input record with its task's stream time once it was read (its partition's
    largest timestamp up to and including it, in offset order)."""
    upto = (Window.partitionBy("partition").orderBy("offset")
            .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    return input_.withColumn("stream_time", F.max("timestamp_ms").over(upto))


def _last_values(out: DataFrame, keys: tuple[str, ...]) -> DataFrame:
    """The last committed record of each window or session (an account's records are in
    one output partition: the largest offset is the last)."""
    last = Window.partitionBy(*keys).orderBy(F.col("offset").desc())
    return (out.withColumn("_k", F.row_number().over(last)).where(F.col("_k") == 1)
            .select(*keys, "count", "sum", "removed",
                    F.col("partition").alias("out_partition"),
                    F.col("offset").alias("out_offset")))


def expected_windows(frames: Frames, spec: WindowSpec) -> DataFrame:
    """(account, start): the least and most count and sum the window may hold."""
    records = _with_stream_time(frames.input)
    ts = F.col("timestamp_ms")
    first = F.floor(F.greatest(F.lit(0), ts - spec.size_ms + spec.advance_ms)
                    / spec.advance_ms) * spec.advance_ms
    last = F.floor(ts / spec.advance_ms) * spec.advance_ms
    exploded = committed_input(records, frames.offsets).withColumn(
        "start", F.explode(F.sequence(first.cast("long"), last.cast("long"),
                                      F.lit(spec.advance_ms).cast("long"))))
    on_time = (F.col("start") + spec.size_ms) > (F.col("stream_time") - spec.grace_ms)
    return exploded.groupBy("account", "start").agg(
        F.count_if(on_time).alias("least_count"),
        F.count("*").alias("most_count"),
        F.coalesce(F.sum(F.when(on_time, F.col("amount"))), F.lit(0)).alias("least_sum"),
        F.sum("amount").alias("most_sum"),
    ).withColumn("end", F.col("start") + spec.size_ms)


def window_judgments(frames: Frames, spec: WindowSpec) -> DataFrame:
    """Every window that is not what its records make, with its `reason` and its `class`
    (lost or wrong)."""
    got = _last_values(frames.windows, ("account", "start"))
    both = expected_windows(frames, spec).join(got, ["account", "start"], "full_outer")
    missing = F.col("count").isNull()
    reason = (
        F.when(F.col("least_count").isNull(), F.lit("no-committed-input"))
        .when(missing & (F.col("least_count") > 0), F.lit("missing"))
        .when(missing, F.lit(None))  # only late records: may rightly be absent
        .when((F.col("count") < F.col("least_count")) | (F.col("sum") < F.col("least_sum")),
              F.lit("below"))
        .when((F.col("count") > F.col("most_count")) | (F.col("sum") > F.col("most_sum")),
              F.lit("above"))
    )
    return (both.withColumn("reason", reason).where(F.col("reason").isNotNull())
            .withColumn("kind", F.lit("window"))
            .withColumn("end", F.coalesce(F.col("end"), F.col("start") + spec.size_ms))
            .withColumn("class", _class(F.col("reason"))))


def _class(reason: Column) -> Column:
    return F.when(reason.isin("missing", "below", "partial"), F.lit(LOST)) \
        .otherwise(F.lit(WRONG))


def expected_sessions(frames: Frames, spec: WindowSpec) -> tuple[DataFrame, DataFrame]:
    """(sessions of the accounts judged, accounts not judged): an account's committed
    records, in timestamp order, split wherever two are more than the gap apart (Kafka
    Streams merges a record into every session within the gap of it)."""
    records = committed_input(_with_stream_time(frames.input), frames.offsets)
    late = F.col("timestamp_ms") < F.col("stream_time") - spec.session_grace_ms
    unjudged = records.where(late).select("account").distinct()
    judged = records.join(unjudged, "account", "left_anti")
    order = Window.partitionBy("account").orderBy("timestamp_ms", "partition", "offset")
    split = F.coalesce(F.col("timestamp_ms") - F.lag("timestamp_ms").over(order)
                       > spec.session_gap_ms, F.lit(True))
    numbered = judged.withColumn("session", F.sum(split.cast("int")).over(
        order.rowsBetween(Window.unboundedPreceding, Window.currentRow)))
    sessions = numbered.groupBy("account", "session").agg(
        F.min("timestamp_ms").alias("e_start"), F.max("timestamp_ms").alias("e_end"),
        F.count("*").alias("e_count"), F.sum("amount").alias("e_sum"))
    return sessions, unjudged


def session_judgments(frames: Frames, spec: WindowSpec) -> tuple[DataFrame, DataFrame]:
    """(every expected session whose committed sessions are not what its records make, and
    every committed session that answers no committed record; the accounts not judged).

    The session with the expected bounds must be live and hold the expected count and sum;
    a live one that is only part of it means its earlier records were lost, one reaching
    past it merged across a gap. Another live session inside it beside the right one is a
    `stale` earlier version whose withdrawal never committed: at-least-once's changelog and
    output are not written together, so a crash can keep a merge's changelog record and
    lose the output that withdrew the session it replaced."""
    expected, unjudged = expected_sessions(frames, spec)
    live = (_last_values(frames.sessions, ("account", "start", "end"))
            .where(~F.col("removed")).join(unjudged, "account", "left_anti"))
    overlaps = ((F.col("start") <= F.col("e_end")) & (F.col("end") >= F.col("e_start")))
    pairs = expected.join(live, ["account"], "inner").where(overlaps)
    exact = (F.col("start") == F.col("e_start")) & (F.col("end") == F.col("e_end"))
    inside = (F.col("start") >= F.col("e_start")) & (F.col("end") <= F.col("e_end"))
    # The example shown: the session with the expected bounds, else the widest.
    rank = F.when(exact, F.lit(1 << 62)).otherwise(F.col("end") - F.col("start"))
    per_expected = pairs.groupBy("account", "session").agg(
        F.count_if(~inside).alias("beyond"), F.count_if(inside & ~exact).alias("inside"),
        F.count_if(exact).alias("exact"),
        *(F.max_by(c, rank).alias(c) for c in ("start", "end", "count", "sum",
                                                "out_partition", "out_offset")))
    judged = expected.join(per_expected, ["account", "session"], "left")
    reason = (
        F.when(F.col("exact").isNull(), F.lit("missing"))
        .when(F.col("beyond") > 0, F.lit("merged"))
        .when((F.col("exact") > 0) & ((F.col("count") < F.col("e_count"))
                                      | (F.col("sum") < F.col("e_sum"))), F.lit("below"))
        .when((F.col("exact") > 0) & ((F.col("count") > F.col("e_count"))
                                      | (F.col("sum") > F.col("e_sum"))), F.lit("above"))
        .when((F.col("exact") > 0) & (F.col("inside") > 0), F.lit("stale"))
        .when(F.col("exact") > 0, F.lit(None))
        .otherwise(F.lit("partial"))
    )
    bad_expected = judged.withColumn("reason", reason).where(F.col("reason").isNotNull())
    strays = (live.join(pairs.select("account", "start", "end").distinct(),
                        ["account", "start", "end"], "left_anti")
              .withColumn("reason", F.lit("no-committed-input"))
              .withColumn("e_count", F.lit(None).cast("long"))
              .withColumn("e_sum", F.lit(None).cast("long")))
    columns = ["account", "start", "end", "count", "sum", "reason", "out_partition",
               "out_offset", "e_count", "e_sum"]
    bad = (bad_expected.withColumn("start", F.coalesce("start", "e_start"))
           .withColumn("end", F.coalesce("end", "e_end"))
           .select(*columns).unionByName(strays.select(*columns)))
    bad = (bad.withColumn("kind", F.lit("session"))
           .withColumn("least_count", F.col("e_count")).withColumn("most_count", F.col("e_count"))
           .withColumn("least_sum", F.col("e_sum")).withColumn("most_sum", F.col("e_sum"))
           .withColumn("class", _class(F.col("reason"))))
    return bad, unjudged


@dataclass(frozen=True)
class _Judgments:
    """Both classes of one run's windows and sessions, from one Spark job: per class the
    count of each kind and the first examples, and the accounts whose sessions were not
    judged."""

    counts: dict[tuple[str, str], int]  # (class, kind) -> windows or sessions
    examples: dict[str, list[dict[str, Any]]]  # class -> its first MAX_EXAMPLES
    unjudged: int


def _judgments(frames: Frames, spec: WindowSpec) -> _Judgments:
    key = ("windowed", spec)
    if key in frames.shared:
        return frames.shared[key]  # type: ignore[return-value]
    sessions, unjudged = session_judgments(frames, spec)
    bad = (window_judgments(frames, spec).select(*_EXAMPLE_COLS, "class")
           .unionByName(sessions.select(*_EXAMPLE_COLS, "class")))
    # Each (class, kind) keeps its first MAX_EXAMPLES rows, each carrying its group's count:
    # enough for every count and for each class's first examples, whatever the mix of kinds.
    group = Window.partitionBy("class", "kind")
    first = (bad.withColumn("_n", F.row_number().over(group.orderBy("account", "start")))
             .withColumn("_count", F.count("*").over(group))
             .where(F.col("_n") <= MAX_EXAMPLES).collect())
    counts = {(r["class"], r["kind"]): int(r["_count"]) for r in first}
    examples: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(first, key=lambda r: (r["kind"], r["account"] or "", r["start"] or 0)):
        examples.setdefault(r["class"], []).append({c: r[c] for c in _EXAMPLE_COLS})
    judged = _Judgments(counts, {c: e[:MAX_EXAMPLES] for c, e in examples.items()},
                        unjudged.count())
    frames.shared[key] = judged
    return judged


def _judged(frames: Frames, meta: Meta, wanted: str) -> CheckResult:
    spec = spec_of(meta)
    if spec is None:
        return not_applicable(meta.not_applicable.get("windows", NO_WINDOWS))
    judged = _judgments(frames, spec)
    counts = {kind: n for (cls, kind), n in judged.counts.items() if cls == wanted}
    details: dict[str, Any] = {"windows": counts.get("window", 0),
                               "sessions": counts.get("session", 0),
                               "session_accounts_not_judged": judged.unjudged}
    count = sum(counts.values())
    if count == 0:
        return CheckResult(valid=True, details=details)
    tolerated = wanted == WRONG and not meta.exactly_once
    return CheckResult(valid=tolerated, count=count,
                       examples=tuple(judged.examples.get(wanted, [])), details=details,
                       note=TOLERATED_NOTE if tolerated else None)


def window_lost_history(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    return _judged(frames, meta, LOST)


def window_wrong(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    return _judged(frames, meta, WRONG)
