"""Context for anomaly examples: the records around an input position and the trace
events near it, so a reader can see what happened without opening the Parquet files.

Each helper runs one small Spark job for all examples of a check (the filters push down to
the Parquet row groups), then distributes the rows to examples in Python: at most
MAX_EXAMPLES positions, so this stays cheap even on 10M-event histories.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from typing import Any

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from checker.frames import Frames
from workloads.ledger.contract import task_id
from workloads.ledger.trace_contract import (
    CHECKPOINT_DELETE,
    CHECKPOINT_READ,
    CHECKPOINT_WRITE,
    CLEANER_DELETE,
    CLIENT_STATE,
    DEDUP_SKIP,
    FATAL,
    GLOBAL_INVALID_OFFSET,
    LOCK_FAILED,
    RESTORE_END,
    RESTORE_START,
    TASK_INIT,
    TASK_RUNNING,
    WIPE,
)

RADIUS = 2  # input records either side of the anomalous one
TRACE_LIMIT = 10
# Trace events that say what a task's state went through; per-record events (dedup-skip,
# transactions) are too many to be context and are attached only when they match.
LIFECYCLE = (
    TASK_INIT,
    CHECKPOINT_READ,
    CHECKPOINT_WRITE,
    CHECKPOINT_DELETE,
    WIPE,
    RESTORE_START,
    RESTORE_END,
    TASK_RUNNING,
    LOCK_FAILED,
    CLEANER_DELETE,
)
PROCESS_EVENTS = (FATAL, CLIENT_STATE, GLOBAL_INVALID_OFFSET)

Position = tuple[int, int]
# A total order on trace rows, so examples come out the same on every run and cluster.
TRACE_ORDER = ("ts_ns", "pod", "pid", "thread", "event", "data")


def parse_json(raw: str) -> Any:
    """Parsed JSON, or the raw text if a (truncated) line does not parse."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def row_dict(row: Row) -> dict[str, Any]:
    out = row.asDict(recursive=True)
    if isinstance(out.get("data"), str):
        out["data"] = parse_json(out["data"])
    return out


def trace_dict(row: Row) -> dict[str, Any]:
    """A trace row as its original line (which holds every column and more)."""
    data = parse_json(row["data"]) if row["data"] is not None else None
    return data if isinstance(data, dict) else row_dict(row)


def _any(conds: Iterable[Column]) -> Column:
    return reduce(lambda a, b: a | b, conds, F.lit(False))


def surrounding(frames: Frames, positions: Sequence[Position]) -> dict[Position, dict]:
    """Input records within RADIUS offsets of each position and the outputs they made."""
    if not positions:
        return {}
    near_in = _any(
        (F.col("partition") == p) & F.col("offset").between(o - RADIUS, o + RADIUS)
        for p, o in positions
    )
    near_out = _any(
        (F.col("in_partition") == p) & F.col("in_offset").between(o - RADIUS, o + RADIUS)
        for p, o in positions
    )
    inputs = frames.input.where(near_in).orderBy("partition", "offset").collect()
    outputs = frames.output.where(near_out).orderBy("partition", "offset").collect()
    ctx: dict[Position, dict] = {}
    for p, o in positions:
        ctx[(p, o)] = {
            "input": [
                row_dict(r)
                for r in inputs
                if r["partition"] == p and abs(r["offset"] - o) <= RADIUS
            ],
            "output": [
                row_dict(r)
                for r in outputs
                if r["in_partition"] == p and abs(r["in_offset"] - o) <= RADIUS
            ],
        }
    return ctx


def task_traces(
    traces: DataFrame, anchors: Sequence[tuple[str, int]], limit: int = TRACE_LIMIT
) -> list[list[dict]]:
    """For each (task, time in ns): the `limit` lifecycle events of that task (and process
    events of any pod) nearest in time, in time order."""
    if not anchors:
        return []
    tasks = sorted({t for t, _ in anchors})
    rows = (
        traces.where(
            (F.col("task").isin(tasks) & F.col("event").isin(*LIFECYCLE))
            | F.col("event").isin(*PROCESS_EVENTS)
        )
        .orderBy(*TRACE_ORDER)
        .collect()
    )
    result = []
    for task, ts in anchors:
        mine = [r for r in rows if r["task"] in (task, None)]
        nearest = sorted(mine, key=lambda r: abs(r["ts_ns"] - ts))[:limit]
        result.append([trace_dict(r) for r in sorted(nearest, key=lambda r: r["ts_ns"])])
    return result


def skip_traces(traces: DataFrame, event_ids: Sequence[str]) -> dict[str, list[dict]]:
    """dedup-skip trace events of the given event ids."""
    if not event_ids:
        return {}
    rows = (
        traces.where(
            (F.col("event") == DEDUP_SKIP)
            & F.get_json_object("data", "$.event_id").isin(list(event_ids))
        )
        .orderBy(*TRACE_ORDER)
        .collect()
    )
    out: dict[str, list[dict]] = {e: [] for e in event_ids}
    for r in rows:
        d = trace_dict(r)
        out.setdefault(str(d.get("event_id")), []).append(d)
    return out


def with_context(
    frames: Frames,
    anomalies: Sequence[Mapping[str, Any]],
    *,
    partition_key: str = "partition",
    offset_key: str = "offset",
    time_ms_key: str = "timestamp_ms",
) -> tuple[dict[str, Any], ...]:
    """Attach surrounding records and nearby task traces to each anomaly dict."""
    positions = [(int(a[partition_key]), int(a[offset_key])) for a in anomalies]
    ctx = surrounding(frames, positions)
    anchors = [
        (task_id(p), int(a.get(time_ms_key) or 0) * 1_000_000)
        for (p, _), a in zip(positions, anomalies, strict=True)
    ]
    traces = task_traces(frames.traces, anchors)
    out = []
    for pos, a, tr in zip(positions, anomalies, traces, strict=True):
        out.append({**a, "context": ctx[pos], "traces": tr})
    return tuple(out)
