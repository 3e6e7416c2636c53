"""stale-global: the join used no account value, or an older one, though a newer one had
been in the accounts topic for long enough.

Judged on each event's first output (checker/ledger.py). An output is stale if, for its
account, the accounts topic has
- a record acknowledged (record timestamp) before the event was sent (input record
  timestamp) while the output's `global_version` is null, or
- a record with a higher version than the output's, acknowledged more than the bound
  (meta.stale_global_bound_s, default 30 s) before the send: a global thread may lag the
  topic a little, never that much.
"""

from __future__ import annotations

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from checker.examples import row_dict, with_context
from checker.frames import Frames
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, CheckResult

_COLS = (
    "event_id",
    "account",
    "global_version",
    "out_partition",
    "out_offset",
    "in_partition",
    "in_offset",
    "sent_ms",
)


# Name of the event tally (Frames.tally) this check reads.
STALE = "stale-global"


def stale(bound_ms: int) -> Column:
    """An event whose first output, sent when its first occurrence was, joined an older
    account value than one acknowledged long enough before the send (the module's rule),
    judged against the view's `account_versions`. An output at any other position is
    wrong-balance's (and duplicate-output's) to report."""
    g, sent = F.col("global_version"), F.col("sent_ms")
    first_output = (
        (F.col("outputs") > 0)
        & (F.col("in_partition") == F.col("partition"))
        & (F.col("in_offset") == F.col("offset"))
    )
    return first_output & F.exists(
        "account_versions",
        lambda v: (g.isNull() & (v["timestamp_ms"] < sent))
        | ((v["timestamp_ms"] + F.lit(bound_ms) < sent) & (v["version"] > g)),
    )


def bound_ms(meta: Meta) -> int:
    return int(meta.stale_global_bound_s * 1000)


def stale_global(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    predicate = stale(bound_ms(meta))
    count = frames.count_events(STALE, predicate)
    if count == 0:
        return CheckResult(valid=True)
    rows = [
        r.asDict()
        for r in frames.events.where(predicate)
        .select(*_COLS)
        .orderBy("in_partition", "in_offset", "event_id")
        .limit(MAX_EXAMPLES)
        .collect()
    ]
    names = sorted({r["account"] for r in rows})
    versions = frames.accounts.where(F.col("account").isin(names)).orderBy("offset").collect()
    examples = with_context(
        frames, rows, partition_key="in_partition", offset_key="in_offset", time_ms_key="sent_ms"
    )
    return CheckResult(
        valid=False,
        count=count,
        examples=tuple(
            {
                **e,
                "accounts": [
                    row_dict(v)
                    for v in versions
                    if v["account"] == e["account"] and v["timestamp_ms"] <= e["sent_ms"]
                ][-MAX_EXAMPLES:],
            }
            for e in examples
        ),
        details={"bound_s": meta.stale_global_bound_s},
    )
