"""stale-global: the join used no account value, or an older one, though a newer one had
been in the accounts topic for long enough.

Judged on each event's first output (checker/ledger.py). An output is stale if, for its
account, the accounts topic has
- a record acknowledged (record timestamp) before the event was sent (input record
  timestamp) while the output's `global_version` is null, or
- a record with a higher version than the output's, acknowledged more than the bound
  (meta.stale_global_bound_s, default 30 s) before the send: a global thread may lag the
  topic a little, never that much.

The bound runs from the end of the last fault that could keep a pod's global consumer
from fetching (a network cut or slow link, a pause, a broker down: the kinds with
Trait.INTERRUPTS_GLOBAL, as the run's plan says: `Meta.fault_traits`) when
that is later than the record's acknowledgement, and an event sent while such a fault is
in force is not judged. Kafka Streams does not hold its stream threads back for the
global thread (a KStream-GlobalKTable join reads the table as it is), so a pod cut off
for 40 s joins its backlog against a table 40 s old once it is back, before its global
consumer has caught up: documented behaviour, not a stale read. What is judged is a
global thread that stays behind for the bound once nothing keeps it from fetching.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from checker.examples import row_dict, with_context
from checker.frames import Frames
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, CheckResult
from common.fault_traits import Trait

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
Window = tuple[int, int]  # (start_ms, end_ms) of one such fault
NEVER_HEALED_MS = 2**62


def interruptions(nemesis_ops: Iterable[tuple[str, int, str]],
                  interrupting: Collection[str]) -> list[Window]:
    """The (start, end) of each fault of the `interrupting` kinds, from the nemesis's ops
    as (f, time_ns, value JSON) rows: phase start/end of a step. A step never healed lasts
    for good."""
    starts: dict[object, int] = {}
    windows: list[Window] = []
    for f, time_ns, value in sorted(nemesis_ops, key=lambda op: op[1]):
        if f not in interrupting:
            continue
        try:
            op = json.loads(value)
        except ValueError:
            continue
        step, at_ms = op.get("step"), time_ns // 1_000_000
        if op.get("phase") == "start":
            starts[step] = at_ms
        elif op.get("phase") == "end" and step in starts:
            windows.append((starts.pop(step), at_ms))
    windows.extend((start, NEVER_HEALED_MS) for start in starts.values())
    return sorted(windows)


def quiet_since(sent: Column, windows: Sequence[Window]) -> Column:
    """The end of the last interrupting fault begun by `sent` (past `sent` if one is in
    force then), or the epoch with none: when the global consumer could fetch again."""
    since = F.lit(0).cast("long")
    for start, end in windows:
        since = F.when(F.lit(start) <= sent, F.greatest(since, F.lit(end))).otherwise(since)
    return since


def stale(bound_ms: int, windows: Sequence[Window] = ()) -> Column:
    """An event whose first output, sent when its first occurrence was, joined an older
    account value than one acknowledged long enough before the send and after the last
    interruption (the module's rule), judged against the view's `account_versions`. An
    output at any other position is wrong-balance's (and duplicate-output's) to report."""
    g, sent = F.col("global_version"), F.col("sent_ms")
    quiet = quiet_since(sent, windows)
    first_output = (
        (F.col("outputs") > 0)
        & (F.col("in_partition") == F.col("partition"))
        & (F.col("in_offset") == F.col("offset"))
    )
    return first_output & F.exists(
        "account_versions",
        lambda v: (g.isNull() & (F.greatest(v["timestamp_ms"], quiet + bound_ms) < sent))
        | ((F.greatest(v["timestamp_ms"], quiet) + F.lit(bound_ms) < sent)
           & (v["version"] > g)),
    )


def nemesis_windows(frames: Frames, meta: Meta) -> list[Window]:
    """`interruptions` of the run's stored nemesis ops (a few dozen rows): those of the
    kinds that keep a global consumer from fetching (a cut or slow link of a pod or a
    broker, a paused process, a broker down)."""
    interrupting = sorted(meta.fault_traits.kinds_with(Trait.INTERRUPTS_GLOBAL))
    if not interrupting:  # none in the plan (an empty IN list is no query to send)
        return []
    rows = (frames.ops.where((F.col("process") == "nemesis") & F.col("f").isin(*interrupting))
            .select("f", "time_ns", "value").collect())
    return interruptions(((r["f"], int(r["time_ns"]), r["value"]) for r in rows), interrupting)


def bound_ms(meta: Meta) -> int:
    return int(meta.stale_global_bound_s * 1000)


def stale_global(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    windows = nemesis_windows(frames, meta)
    predicate = stale(bound_ms(meta), windows)
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
        details={"bound_s": meta.stale_global_bound_s,
                 "interruptions_ms": [list(w) for w in windows]},
    )
