"""Balance checks: each event's first output carries the account's balance after it.

The expected balance at a first occurrence is the sum of the amounts of the account's
first occurrences up to and including it (checker/ledger.py). Only the first output of an
event is judged: further outputs are duplicate-output's business, and judging them too
would report one fault twice.

- lost-history: emitted < expected (the store went back, e.g. restarted from empty);
- wrong-balance: emitted > expected, or the output does not belong where it claims: no
  committed occurrence of its event, an input position other than the event's first
  occurrence, or a different amount.
Examples show where each affected account first went wrong (the onset), since every later
output of that account is off by the same fault.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checker.examples import with_context
from checker.frames import Frames
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, CheckResult

_EXAMPLE_COLS = (
    "event_id",
    "account",
    "amount",
    "balance",
    "expected",
    "partition",
    "offset",
    "out_partition",
    "out_offset",
    "in_partition",
    "in_offset",
    "sent_ms",
    "reason",
)


def fault() -> Column:
    """Why an event's first output is wrong (null: it is right, or there is none)."""
    return (
        F.when(F.col("outputs") == 0, F.lit(None))
        .when(F.col("partition").isNull(), F.lit("no-committed-input"))
        .when(
            (F.col("in_partition") != F.col("partition")) | (F.col("in_offset") != F.col("offset")),
            F.lit("not-first-occurrence"),
        )
        .when(F.col("out_amount") != F.col("amount"), F.lit("amount-mismatch"))
        .when(F.col("balance") < F.col("expected"), F.lit("below"))
        .when(F.col("balance") > F.col("expected"), F.lit("above"))
    )


def below() -> Column:
    return fault() == "below"


def otherwise_wrong() -> Column:
    return fault() != "below"  # null (nothing wrong) is neither counted nor kept


# Names of the event tallies (Frames.tally) these checks read.
BELOW = "balance-below"
OTHERWISE_WRONG = "balance-otherwise-wrong"


def _report(frames: Frames, bad: DataFrame, count: int) -> CheckResult:
    if count == 0:
        return CheckResult(valid=True)
    onset = Window.partitionBy("account").orderBy("in_partition", "in_offset", "event_id")
    onsets = bad.withColumn("_k", F.row_number().over(onset)).where(F.col("_k") == 1)
    accounts = onsets.count()
    rows = [
        r.asDict()
        for r in onsets.select(*_EXAMPLE_COLS)
        .orderBy("in_partition", "in_offset", "event_id")
        .limit(MAX_EXAMPLES)
        .collect()
    ]
    examples = with_context(
        frames, rows, partition_key="in_partition", offset_key="in_offset", time_ms_key="sent_ms"
    )
    return CheckResult(valid=False, count=count, examples=examples, details={"accounts": accounts})


def _judged(frames: Frames, name: str, predicate: Column) -> CheckResult:
    """The events matching `predicate` (counted as the tally `name`), with a `reason`."""
    bad = frames.events.where(predicate).withColumn("reason", fault())
    return _report(frames, bad, frames.count_events(name, predicate))


def lost_history(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    return _judged(frames, BELOW, below())


def wrong_balance(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    return _judged(frames, OTHERWISE_WRONG, otherwise_wrong())
