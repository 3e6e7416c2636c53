"""The ledger's committed history as one row per event: what every event-level and
balance check reads.

Definitions (the checks in docs/architecture.md; issue 5):
- committed input: input records below the group's committed offset of their partition
  (no commit for a partition: nothing of it is committed);
- committed output: outputs whose input position (in_partition, in_offset) is committed;
- an event is (account, event id): the client re-sends an event with its account, so all
  occurrences of an event id sit in its account's partition. Its first occurrence is the
  lowest (partition, offset); that one must produce exactly one output;
- expected balance at a first occurrence: the sum of the amounts of the account's first
  occurrences up to and including it (re-sends add nothing).

Columns of the view:
  account, event_id
  partition, offset, sent_ms, amount  first committed occurrence (null: none)
  occurrences                         committed input records of the event
  expected                            expected balance there (null: no occurrence)
  outputs                             committed outputs of the event (0: none)
  out_partition, out_offset, in_partition, in_offset, balance, out_amount,
  global_version                      its first output: lowest output (partition,
                                      offset); null if none
  account_versions                    the accounts topic's versioned records of the
                                      account, as (timestamp_ms, version) structs;
                                      null if it has none (stale-global's lookup)

Cost: committed input and output records are shuffled once, together, by account; one
hash aggregation per (account, event id) finds each event's first occurrence and first
output (positions packed into longs so min/min_by stay hash-based), and one sort per
account orders first occurrences for the running sum. Window functions over every record
and joins between input and output cost about three times as much. The account versions
come from a broadcast join of the accounts topic (one row per version), so stale-global
is a predicate on the view like the other checks and is tallied in the same job.
Columns are named by F.col, not df["name"] or groupBy("name"): through Spark Connect those
ask the server for the schema (checks/digests.py).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from checker.windows import hashed_keys


def _partitions(df: DataFrame) -> int:
    return int(df.sparkSession.conf.get("spark.sql.shuffle.partitions") or 8)


def _limit(offsets: DataFrame) -> DataFrame:
    return F.broadcast(
        offsets.select(
            F.col("partition").alias("_cp"),
            F.coalesce(F.col("committed"), F.lit(0)).alias("_committed"),
        )
    )


def _below_committed(rows: DataFrame, offsets: DataFrame, partition: str, offset: str) -> DataFrame:
    """The rows whose input position (`partition`, `offset`) is below the group's committed
    offset of that input partition."""
    return (
        rows.join(_limit(offsets), F.col(partition) == F.col("_cp"))
        .where(F.col(offset) < F.col("_committed"))
        .drop("_cp", "_committed")
    )


def committed_input(input_: DataFrame, offsets: DataFrame) -> DataFrame:
    return _below_committed(input_, offsets, "partition", "offset")


def committed_output(output: DataFrame, offsets: DataFrame) -> DataFrame:
    """Outputs of committed input (by the input position each output names)."""
    return _below_committed(output, offsets, "in_partition", "in_offset")


_POS_BITS = 40  # offsets stay below 2**40; partitions below 2**23
_MASK = (1 << _POS_BITS) - 1


def _pos(partition: str, offset: str) -> Column:
    """(partition, offset) as one long with the same order: min() and min_by() over a
    long keep the aggregation hash-based (a struct would force a sort)."""
    return F.shiftleft(F.col(partition).cast("long"), _POS_BITS) + F.col(offset)


def account_versions(accounts: DataFrame) -> DataFrame:
    """One row per account: its versioned records as (timestamp_ms, version) structs."""
    return accounts.where(F.col("version").isNotNull()).groupBy(F.col("account")).agg(
        F.collect_list(F.struct(F.col("timestamp_ms"), F.col("version"))).alias(
            "account_versions"
        )
    )


def _unpos(position: str, partition: str, offset: str) -> tuple[Column, Column]:
    """The (partition, offset) columns, named so, of a `_pos` column."""
    return (
        F.shiftright(position, _POS_BITS).cast("int").alias(partition),
        F.col(position).bitwiseAND(F.lit(_MASK)).alias(offset),
    )


def _union_side(rows: DataFrame, position: str, fields: dict[str, str]) -> DataFrame:
    """Input or output rows as one side of events_view's union: the event, the record's
    position as `position` (_pos), and `fields` renamed (column -> name in the union)."""
    return rows.select(
        "account",
        "event_id",
        _pos("partition", "offset").alias(position),
        *(F.col(column).alias(name) for column, name in fields.items()),
    )


def events_view(
    input_: DataFrame, output: DataFrame, offsets: DataFrame, accounts: DataFrame
) -> DataFrame:
    n = _partitions(input_)
    # Each side keeps only its own fields; the union fills the other side's with nulls.
    ins = _union_side(committed_input(input_, offsets), "_in",
                      {"timestamp_ms": "_ts", "amount": "_amount"})
    outs = _union_side(committed_output(output, offsets), "_out",
                       {"in_partition": "_in_partition", "in_offset": "_in_offset",
                        "balance": "_balance", "amount": "_out_amount",
                        "global_version": "_version"})
    # One shuffle of input and output together; min_by skips rows whose ordering is null,
    # so each side's fields come from its own lowest position.
    grouped = (
        ins.unionByName(outs, allowMissingColumns=True)
        .repartition(n, "account")
        .groupBy(F.col("account"), F.col("event_id"))
        .agg(
            F.min("_in").alias("_first"),
            F.count("_in").alias("occurrences"),
            F.min_by("_ts", "_in").alias("sent_ms"),
            F.min_by("_amount", "_in").alias("amount"),
            F.min("_out").alias("_first_out"),
            F.count("_out").alias("outputs"),
            F.min_by("_in_partition", "_out").alias("in_partition"),
            F.min_by("_in_offset", "_out").alias("in_offset"),
            F.min_by("_balance", "_out").alias("balance"),
            F.min_by("_out_amount", "_out").alias("out_amount"),
            F.min_by("_version", "_out").alias("global_version"),
        )
    )
    view = grouped.select(
        "account",
        "event_id",
        *_unpos("_first", "partition", "offset"),
        "sent_ms",
        "amount",
        "occurrences",
        "outputs",
        *_unpos("_first_out", "out_partition", "out_offset"),
        "in_partition",
        "in_offset",
        "balance",
        "out_amount",
        "global_version",
        "_first",
    )
    # ROWS frame: positions are unique per first occurrence; cheaper than RANGE. Output-
    # only rows (no committed occurrence) sort last and get no expected balance.
    running = (
        Window.partitionBy(*hashed_keys("account"))
        .orderBy(F.col("_first").asc_nulls_last())
        .rowsBetween(Window.unboundedPreceding, Window.currentRow)
    )
    return (
        view.withColumn(
            "expected", F.when(F.col("_first").isNotNull(), F.sum("amount").over(running))
        )
        .drop("_first")
        .join(F.broadcast(account_versions(accounts)), "account", "left")
    )
