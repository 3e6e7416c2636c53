"""Balance checks: each event's first output carries the account's balance after it.

Expected balance at an input record = the sum of the amounts of first occurrences of its
account up to and including that record (re-sent duplicates add nothing). Only the first
output of an event id is judged: further outputs are duplicate-output's business, and
judging them too would report one fault twice.

- lost-history: emitted < expected (the store went back, e.g. restarted from empty);
- wrong-balance: emitted > expected, or the output names an input position that holds no
  committed record or a different event.
Examples show where each affected account first went wrong (the onset), since every later
output of that account is off by the same fault.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
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
    "in_partition",
    "in_offset",
    "sent_ms",
    "reason",
)


def _judged(frames: Frames) -> DataFrame:
    outs = frames.committed_output.where(F.col("is_first_output"))
    input_mismatch = (
        F.col("in_event_id").isNull()
        | (F.col("in_event_id") != F.col("event_id"))
        | (F.col("in_account") != F.col("account"))
        | (F.col("in_amount") != F.col("amount"))
    )
    reason = (
        F.when(input_mismatch, F.lit("input-mismatch"))
        .when(F.col("balance") < F.col("expected"), F.lit("below"))
        .when(F.col("balance") > F.col("expected"), F.lit("above"))
    )
    return outs.withColumn("reason", reason).where(F.col("reason").isNotNull())


def _report(frames: Frames, bad: DataFrame) -> CheckResult:
    count = bad.count()
    if count == 0:
        return CheckResult(valid=True)
    onset = Window.partitionBy("account").orderBy(
        "in_partition", "in_offset", "partition", "offset"
    )
    onsets = bad.withColumn("_k", F.row_number().over(onset)).where(F.col("_k") == 1)
    accounts = onsets.count()
    rows = [
        r.asDict()
        for r in onsets.select(*_EXAMPLE_COLS)
        .orderBy("in_partition", "in_offset", "partition", "offset")
        .limit(MAX_EXAMPLES)
        .collect()
    ]
    examples = with_context(
        frames, rows, partition_key="in_partition", offset_key="in_offset", time_ms_key="sent_ms"
    )
    return CheckResult(valid=False, count=count, examples=examples, details={"accounts": accounts})


def lost_history(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    return _report(frames, _judged(frames).where(F.col("reason") == "below"))


def wrong_balance(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    return _report(frames, _judged(frames).where(F.col("reason") != "below"))
