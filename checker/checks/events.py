"""Event-level checks: every committed event has exactly one committed output.

- dedup-skip: a first occurrence with no output, skipped as seen at that very position
  (the worker's `dedup-skip` trace names partition and offset). Under either guarantee the
  fixed ledger never does this: under exactly-once a seen event's output committed with
  its dedup entry; under at-least-once a redelivery at the position its entry remembers
  re-emits the remembered output (`dedup-reemit`) instead of skipping. So a skip there
  means the store remembered an event whose output never committed (KAFKA-20685,
  restore-read-uncommitted);
- lost-event: a first occurrence with no output and no such skip;
- duplicate-output: an event with more than one output. At-least-once allows this (a
  crash between output and offset commit re-processes; a re-emit repeats the output
  identically), so under that guarantee the check reports the duplicates but stays valid.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from checker.examples import row_dict, skip_traces, with_context
from checker.frames import Frames, trace_field
from checker.ledger import committed_input, committed_output
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, CheckResult
from common.guarantees import AT_LEAST_ONCE
from workloads.ledger.trace_contract import DEDUP_SKIP

TOLERATED_NOTE = (
    "at_least_once allows re-processing after a crash: duplicates are reported but do "
    "not make the run invalid"
)
# Names of the event tallies (Frames.tally) these checks read.
WITHOUT_OUTPUT = "without-output"
DUPLICATED = "duplicated"
_FIRST_COLS = ("partition", "offset", "sent_ms", "event_id", "account", "amount")


def _skips(frames: Frames) -> DataFrame:
    return (
        frames.traces.where(F.col("event") == DEDUP_SKIP)
        .select(
            # try_cast: under ANSI SQL one malformed trace line must not fail the check
            trace_field("partition").try_cast("int").alias("partition"),
            trace_field("offset").try_cast("bigint").alias("offset"),
        )
        .distinct()
    )


def without_output() -> Column:
    """An event of the view with a committed occurrence and no committed output."""
    return F.col("partition").isNotNull() & (F.col("outputs") == 0)


def duplicated() -> Column:
    return F.col("outputs") > 1


def _without_output(frames: Frames) -> DataFrame:
    return frames.events.where(without_output())


def _missing(frames: Frames, skipped: bool) -> DataFrame:
    missing = _without_output(frames)
    how = "left_semi" if skipped else "left_anti"
    return missing.join(F.broadcast(_skips(frames)), ["partition", "offset"], how)


def _report(frames: Frames, rows: DataFrame) -> CheckResult:
    count = rows.count()
    if count == 0:
        return CheckResult(valid=True)
    found = [
        row_dict(r)
        for r in rows.select(*_FIRST_COLS)
        .orderBy("partition", "offset")
        .limit(MAX_EXAMPLES)
        .collect()
    ]
    skips = skip_traces(frames.traces, [a["event_id"] for a in found])
    examples = tuple(
        {**e, "skips": skips.get(e["event_id"], [])}
        for e in with_context(frames, found, time_ms_key="sent_ms")
    )
    return CheckResult(valid=False, count=count, examples=examples)


def dedup_skip(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    if frames.count_events(WITHOUT_OUTPUT, without_output()) == 0:  # no trace scan
        return CheckResult(valid=True)
    return _report(frames, _missing(frames, skipped=True))


def lost_event(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    if frames.count_events(WITHOUT_OUTPUT, without_output()) == 0:
        return CheckResult(valid=True)
    return _report(frames, _missing(frames, skipped=False))


def duplicate_output(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    dups = frames.events.where(duplicated())
    count = frames.count_events(DUPLICATED, duplicated())
    if count == 0:
        return CheckResult(valid=True)
    keys = [
        (r["account"], r["event_id"])
        for r in dups.select("account", "event_id")
        .orderBy("account", "event_id")
        .limit(MAX_EXAMPLES)
        .collect()
    ]
    # Few ids: a filter on the raw files (pushed down), not another pass over the view.
    ids = [e for _, e in keys]
    outs = (
        committed_output(frames.output.where(F.col("event_id").isin(ids)), frames.offsets)
        .orderBy("partition", "offset")
        .collect()
    )
    ins = (
        committed_input(frames.input.where(F.col("event_id").isin(ids)), frames.offsets)
        .orderBy("partition", "offset")
        .collect()
    )
    examples = []
    for account, eid in keys:
        mine = [row_dict(r) for r in outs if (r["account"], r["event_id"]) == (account, eid)]
        occ = [row_dict(r) for r in ins if (r["account"], r["event_id"]) == (account, eid)]
        examples.append(
            {
                "event_id": eid,
                "account": account,
                "outputs": mine[:MAX_EXAMPLES],
                "input": occ[:MAX_EXAMPLES],
            }
        )
    # At-least-once promises no more than "at least once": report, do not fail.
    tolerated = meta.guarantee == AT_LEAST_ONCE
    return CheckResult(
        valid=tolerated,
        count=count,
        examples=tuple(examples),
        note=TOLERATED_NOTE if tolerated else None,
    )
