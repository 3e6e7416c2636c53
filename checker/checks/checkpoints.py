"""stale-checkpoint (exactly-once only): a task trusted a checkpoint its store did not match.

(a) Digest at init: a `task-init` trace with a checkpoint offset says what the store held
    (`digest`); it must be the digest of the committed changelog replayed (last value per
    key, tombstones delete) up to and including that offset, or up to a later offset
    (store ahead of its checkpoint with committed data only: harmless). See digests.py.
(b) Checkpoint present while RUNNING: per pod process and task, the trace's checkpoint file
    operations (write/read leave a file, delete/wipe/cleaner-delete remove it) are replayed
    in time order; a `task-running` while a file is present is the KAFKA-20685 shape.
Under at-least-once the store may legitimately be ahead of its checkpoint (checkpoints
follow commits, the store has the WAL), so the check does not apply there.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from checker.checks.digests import stale_inits
from checker.examples import TRACE_ORDER, parse_json, row_dict, trace_dict
from checker.frames import Frames
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, CheckResult

PRESENT = ("checkpoint-write", "checkpoint-read")
ABSENT = ("checkpoint-delete", "wipe", "cleaner-delete")
CONTEXT_EVENTS = (*PRESENT, *ABSENT, "task-init", "restore-start", "restore-end", "task-running")
DIGEST_ORDER = ("ts_ns", "pod", "pid", "task", "store")


def _nulls_first(value: Any) -> tuple[bool, Any]:
    """A sort key ordering like Spark's ascending orderBy: nulls first."""
    return (value is not None, value)


def running_with_checkpoint(frames: Frames) -> DataFrame:
    ops = frames.traces.where(
        F.col("task").isNotNull() & F.col("event").isin(*PRESENT, *ABSENT, "task-running")
    )
    before = (
        Window.partitionBy("pod", "pid", "task")
        .orderBy("ts_ns", "event", "data")
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    file_op = F.when(F.col("event").isin(*PRESENT), F.col("data")).when(
        F.col("event").isin(*ABSENT), F.lit("")
    )
    return (
        ops.withColumn("_last", F.last(file_op, ignorenulls=True).over(before))
        .where((F.col("event") == "task-running") & (F.col("_last") != ""))
        .select("pod", "pid", "ts_ns", "task", F.col("_last").alias("file_op"))
    )


def _task_events(frames: Frames, keys: list[tuple[str, int, str]]) -> list[list[dict]]:
    if not keys:
        return []
    pods = sorted({k[0] for k in keys})
    tasks = sorted({k[2] for k in keys})
    rows = (
        frames.traces.where(
            F.col("pod").isin(pods)
            & F.col("task").isin(tasks)
            & F.col("event").isin(*CONTEXT_EVENTS)
        )
        .orderBy(*TRACE_ORDER)
        .collect()
    )
    return [
        [trace_dict(r) for r in rows if (r["pod"], r["pid"], r["task"]) == k][-MAX_EXAMPLES:]
        for k in keys
    ]


def stale_checkpoint(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    if not meta.exactly_once:
        return CheckResult(valid=True, note=f"not applicable under {meta.guarantee!r}")
    # Both shapes are few (at most one row per task init or task-running trace): each is
    # collected whole, one job apiece, and counted and ordered here.
    digests = sorted(
        ({k: v for k, v in row_dict(r).items() if k != "_init"} for r in stale_inits(frames)),
        key=lambda d: tuple(_nulls_first(d[c]) for c in DIGEST_ORDER),
    )
    running = running_with_checkpoint(frames).orderBy("ts_ns", "pod", "pid", "task").collect()
    n_digest = len(digests)
    n_running = len(running)
    count = n_digest + n_running
    if count == 0:
        return CheckResult(valid=True)
    # Both shapes get room in the examples when both occur.
    d_rows = [{"kind": "digest-mismatch", **d} for d in digests[:MAX_EXAMPLES]]
    r_rows = [
        {"kind": "checkpoint-while-running", **row_dict(r), "file_op": parse_json(r["file_op"])}
        for r in running[:MAX_EXAMPLES]
    ]
    keep_r = min(len(r_rows), max(MAX_EXAMPLES - len(d_rows), MAX_EXAMPLES // 2))
    found = d_rows[: MAX_EXAMPLES - keep_r] + r_rows[:keep_r]
    traces = _task_events(frames, [(e["pod"], e["pid"], e["task"]) for e in found])
    examples = tuple({**e, "traces": t} for e, t in zip(found, traces, strict=True))
    return CheckResult(
        valid=False,
        count=count,
        examples=examples,
        details={"digest_mismatch": n_digest, "checkpoint_while_running": n_running},
    )
