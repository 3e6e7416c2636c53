"""stale-checkpoint (exactly-once only): a task trusted a checkpoint its store did not match.

(a) Digest at init: a `task-init` trace with a checkpoint offset says what the store held
    (`digest`); it must be the digest of the committed changelog replayed (last value per
    key, tombstones delete) up to and including that offset, or up to a later offset
    (store ahead of its checkpoint with committed data only: harmless). See digests.py.
(b) Checkpoint present while RUNNING and processing (KAFKA-20685): per pod process and
    task, the trace's checkpoint file operations (write/read leave a file,
    delete/wipe/cleaner-delete remove it) are replayed in time order; a `task-running`
    while a file is present is a candidate. Under exactly-once that file matters only once
    the store holds writes no commit covers, i.e. from the task's first processed record
    since it went RUNNING: the candidate is an anomaly unless the file was removed strictly
    before that record (a removal at the same nanosecond as it is not before it). A file
    removed in between is no anomaly (issue 30: Kafka Streams 4.2.2, the KAFKA-20685 fix,
    deleted its restore-time checkpoint 0.3 ms after the processors' init, which the
    kstreams app traces as `task-running`), and neither is a running period, up to the
    task's next `task-running` or `task-closed` in that process, with no record. A file
    written after the `task-running` is not judged here.

    The first processed record is the earliest trace line after the `task-running`, in
    that process and running period, that shows the task had processed one by then:
    - a `task-first-record` (the kstreams app: after the first record's writes since the
      processor's init), a `dedup-skip` / `dedup-reemit` (both systems under test) or a
      `memtable-flush` (the Python worker) of the task: the record, or its writes;
    - a `txn-commit` whose `offsets` name the task's input partition (the Python worker:
      only tasks that processed records since the last commit are in it);
    - a `txn-commit` without `offsets` (the kstreams app: a rise of the stream thread's
      `commit-total` metric, polled every 50 ms) on the thread that traced the
      `task-running`, the second one after it: the first may count a commit made before
      the task went RUNNING, the second counts only commits made after the first was
      read. Apps built before `task-first-record` traced a record only when they
      skipped or re-emitted it; where no such line comes first this proxy stands for the
      task's first record:
      a thread commits only when some task on it processed records, and a RUNNING task
      with buffered records is processed before its thread's next commit. A task with no
      records on a thread whose other tasks commit is judged as if it had one.
    Every line is at or after the record it shows (never before it), so a file removed
    between the record and the line is given the benefit of the doubt.
(a') Where the stores keep their own offsets (Kafka Streams 4.3 on, KIP-1035: no
    `.checkpoint` file for (b) to see), the offset a store reports and what it holds when
    its task turns RUNNING (`store-offsets`), judged as (a) judges a task-init: see
    store_offsets.py. Its examples are `store-offsets-mismatch`.
Under at-least-once the store may legitimately be ahead of its checkpoint (checkpoints
follow commits, the store has the WAL), so the check does not apply there.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession, Window
from pyspark.sql import functions as F

from checker.checks.digests import inits, stale_inits
from checker.checks.store_offsets import judged_lines, store_offset_inits
from checker.examples import TRACE_ORDER, parse_json, row_dict, trace_dict
from checker.frames import Frames, trace_field
from checker.meta import Meta
from checker.model import MAX_EXAMPLES, CheckResult
from workloads.ledger.trace_contract import (
    CHECKPOINT_DELETE,
    CHECKPOINT_READ,
    CHECKPOINT_WRITE,
    CLEANER_DELETE,
    DEDUP_REEMIT,
    DEDUP_SKIP,
    MEMTABLE_FLUSH,
    RESTORE_END,
    RESTORE_START,
    STORE_OFFSETS,
    TASK_CLOSED,
    TASK_FIRST_RECORD,
    TASK_INIT,
    TASK_RUNNING,
    TXN_COMMIT,
    WIPE,
)

PRESENT = (CHECKPOINT_WRITE, CHECKPOINT_READ)
ABSENT = (CHECKPOINT_DELETE, WIPE, CLEANER_DELETE)
# A task's running period ends at its next processor init or close in the same process.
PERIOD_ENDS = (TASK_RUNNING, TASK_CLOSED)
# Trace lines of one task that follow a record it processed.
TASK_PROCESSED = (TASK_FIRST_RECORD, DEDUP_SKIP, DEDUP_REEMIT, MEMTABLE_FLUSH)
COMMIT = TXN_COMMIT
# Which thread-level commit after a task-running stands for the task's first record: the
# second, since the first rise of a polled metric may count a commit made before it.
THREAD_COMMIT_RANK = 2
CONTEXT_EVENTS = (
    *PRESENT,
    *ABSENT,
    TASK_INIT,
    STORE_OFFSETS,
    RESTORE_START,
    RESTORE_END,
    *PERIOD_ENDS,
)
DIGEST_ORDER = ("ts_ns", "pod", "pid", "task", "store")
RUN_KEY = ("pod", "pid", "task", "ts_ns")


def _nulls_first(value: Any) -> tuple[bool, Any]:
    """A sort key ordering like Spark's ascending orderBy: nulls first."""
    return (value is not None, value)


def running_with_checkpoint(frames: Frames) -> DataFrame:
    """Each `task-running` while a checkpoint file is present: the line that left the file
    (`file_op`), when a file was next removed (`removed_ns`, null: never) and when the
    running period ended (`end_ns`, null: not in this process's trace)."""
    ops = frames.traces.where(
        F.col("task").isNotNull() & F.col("event").isin(*PRESENT, *ABSENT, *PERIOD_ENDS)
    )
    order = Window.partitionBy("pod", "pid", "task").orderBy("ts_ns", "event", "data")
    before = order.rowsBetween(Window.unboundedPreceding, -1)
    after = order.rowsBetween(1, Window.unboundedFollowing)
    # A read that found no file (the legacy app traces every read: `{}`) leaves none.
    no_file = (F.col("event") == CHECKPOINT_READ) & (trace_field("offsets") == "{}")
    file_op = F.when(F.col("event").isin(*PRESENT) & ~no_file, F.col("data")).when(
        F.col("event").isin(*ABSENT) | no_file, F.lit("")
    )
    removed = F.when(F.col("event").isin(*ABSENT) | no_file, F.col("ts_ns"))
    ended = F.when(F.col("event").isin(*PERIOD_ENDS), F.col("ts_ns"))
    return (
        ops.withColumn("_last", F.last(file_op, ignorenulls=True).over(before))
        .withColumn("removed_ns", F.first(removed, ignorenulls=True).over(after))
        .withColumn("end_ns", F.first(ended, ignorenulls=True).over(after))
        .where((F.col("event") == TASK_RUNNING) & (F.col("_last") != ""))
        .select(
            "pod",
            "pid",
            "ts_ns",
            "thread",
            "task",
            F.col("_last").alias("file_op"),
            "removed_ns",
            "end_ns",
        )
    )


def first_records(frames: Frames, running: DataFrame) -> DataFrame:
    """Per row of `running_with_checkpoint`: the trace line that stands for the task's
    first processed record of that running period (module docstring), as `first_ns`,
    `first_line`; rows without one are left out."""
    lines = frames.traces.where(F.col("event").isin(*TASK_PROCESSED, COMMIT)).select(
        F.col("pod").alias("_pod"),
        F.col("pid").alias("_pid"),
        F.col("thread").alias("_thread"),
        F.col("task").alias("_task"),
        F.col("event").alias("_event"),
        F.col("ts_ns").alias("first_ns"),
        F.col("data").alias("first_line"),
        F.from_json(trace_field("offsets"), "map<string,bigint>").alias("_offsets"),
    )
    runs = running.select(
        *RUN_KEY, "thread", "end_ns", F.substring_index("task", "_", -1).alias("_partition")
    )
    within = (
        (F.col("_pod") == F.col("pod"))
        & (F.col("_pid") == F.col("pid"))
        & (F.col("first_ns") > F.col("ts_ns"))
        & (F.col("end_ns").isNull() | (F.col("first_ns") < F.col("end_ns")))
    )
    is_commit = F.col("_event") == COMMIT
    kind = (
        F.when(~is_commit & (F.col("_task") == F.col("task")), F.lit("task"))
        .when(is_commit & F.map_contains_key("_offsets", F.col("_partition")), F.lit("task"))
        .when(
            is_commit & F.col("_offsets").isNull() & (F.col("_thread") == F.col("thread")),
            F.lit("thread"),
        )
    )
    by_kind = Window.partitionBy(*RUN_KEY, "_kind").orderBy("first_ns", "first_line")
    earliest = Window.partitionBy(*RUN_KEY).orderBy("first_ns", "_kind", "first_line")
    return (
        lines.join(F.broadcast(runs), within)
        .withColumn("_kind", kind)
        .where(F.col("_kind").isNotNull())
        .withColumn("_rank", F.row_number().over(by_kind))
        .where(
            ((F.col("_kind") == "task") & (F.col("_rank") == 1))
            | ((F.col("_kind") == "thread") & (F.col("_rank") == THREAD_COMMIT_RANK))
        )
        .withColumn("_first", F.row_number().over(earliest))
        .where(F.col("_first") == 1)
        .select(*RUN_KEY, "first_ns", "first_line")
    )


def judge_running(frames: Frames) -> tuple[list[tuple[Row, Row]], int, int]:
    """The checkpoints present when their task processed its first record since RUNNING
    (pairs of the `running_with_checkpoint` row and its `first_records` row, in time
    order), the candidates whose file was removed before that record, and those whose
    running period had no record."""
    running = running_with_checkpoint(frames)
    candidates = running.orderBy("ts_ns", "pod", "pid", "task").collect()
    if not candidates:
        return [], 0, 0
    firsts = {tuple(r[c] for c in RUN_KEY): r for r in first_records(frames, running).collect()}
    found: list[tuple[Row, Row]] = []
    removed_before = no_record = 0
    for run in candidates:
        first = firsts.get(tuple(run[c] for c in RUN_KEY))
        if first is None:
            no_record += 1
        elif run["removed_ns"] is not None and run["removed_ns"] < first["first_ns"]:
            removed_before += 1
        else:
            found.append((run, first))
    return found, removed_before, no_record


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


def _running_example(run: Row, first: Row) -> dict[str, Any]:
    return {
        "kind": "checkpoint-while-running",
        "pod": run["pod"],
        "pid": run["pid"],
        "ts_ns": run["ts_ns"],
        "task": run["task"],
        "file_op": parse_json(run["file_op"]),
        "first_record": parse_json(first["first_line"]),
        "removed_ns": run["removed_ns"],
    }


def stale_checkpoint(spark: SparkSession, frames: Frames, meta: Meta) -> CheckResult:
    if not meta.exactly_once:
        return CheckResult(valid=True, note=f"not applicable under {meta.guarantee!r}")
    # Both shapes are few (at most one row per task init or task-running trace): each is
    # collected whole, one job apiece (a second for (b) only when some task went RUNNING
    # with a file present), and counted and ordered here.
    # A task-init's checkpoint and a store's own offset are one question: one replay.
    judged = inits(frames).unionByName(store_offset_inits(frames))
    digests = sorted(
        (
            {k: v for k, v in row_dict(r).items() if k != "_init"}
            for r in stale_inits(frames, judged)
        ),
        key=lambda d: tuple(_nulls_first(d[c]) for c in DIGEST_ORDER),
    )
    running, removed_before, no_record = judge_running(frames)
    excused = {
        "checkpoint_removed_before_first_record": removed_before,
        "checkpoint_running_without_record": no_record,
    }
    excused = {k: v for k, v in excused.items() if v}
    # Only the Kafka Streams app writes store-offsets: say how many a run was judged on.
    if meta.raw.get("sut") == "kstreams":
        excused["store_offsets_judged"] = judged_lines(frames)
    n_stores = sum(d["source"] == STORE_OFFSETS for d in digests)
    n_digest = len(digests) - n_stores
    n_running = len(running)
    count = len(digests) + n_running
    if count == 0:
        return CheckResult(valid=True, details=excused)
    # Both shapes get room in the examples when both occur.
    d_rows = [{"kind": _digest_kind(d), **d} for d in digests[:MAX_EXAMPLES]]
    r_rows = [_running_example(run, first) for run, first in running[:MAX_EXAMPLES]]
    keep_r = min(len(r_rows), max(MAX_EXAMPLES - len(d_rows), MAX_EXAMPLES // 2))
    found = d_rows[: MAX_EXAMPLES - keep_r] + r_rows[:keep_r]
    traces = _task_events(frames, [(e["pod"], e["pid"], e["task"]) for e in found])
    examples = tuple({**e, "traces": t} for e, t in zip(found, traces, strict=True))
    return CheckResult(
        valid=False,
        count=count,
        examples=examples,
        details={
            "digest_mismatch": n_digest,
            "checkpoint_while_running": n_running,
            **({"store_offsets_mismatch": n_stores} if n_stores else {}),
            **excused,
        },
    )


def _digest_kind(row: dict[str, Any]) -> str:
    """A task-init's checkpoint that its store did not match, or a store's own offset."""
    return "store-offsets-mismatch" if row["source"] == STORE_OFFSETS else "digest-mismatch"
