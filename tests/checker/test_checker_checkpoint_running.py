"""stale-checkpoint's checkpoint-while-running half judged at the task's first processed
record (issue 30): Kafka Streams 4.2.2, the release that fixed KAFKA-20685, deleted its
restore-time checkpoint 0.3 ms after the app traced `task-running` (the processors' init),
before any record, and was flagged. The sequences below are that run's, as the kstreams
app and the state-directory watch write them (results/README.md), on top of a small valid
history; only the check itself runs (Spark), not the whole checker.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from synth_history import T0_MS, Params, generate

from checker.checks.checkpoints import running_with_checkpoint, stale_checkpoint
from checker.frames import Frames, load_frames
from checker.meta import Meta
from checker.model import CheckResult

pytestmark = pytest.mark.spark

TASK = "0_0"
PID = 4242
RUNNING_NS = T0_MS * 1_000_000 + 5_000_000_000
MS = 1_000_000
RESTORED = {"ledger-app-balances-changelog-0": -4, "ledger-app-dedup-changelog-0": -4}


def line(pod: str, ts_ns: int, event: str, thread: str, **fields: Any) -> dict[str, Any]:
    data = {"ts_ns": ts_ns, "pod": pod, "pid": PID, "thread": thread, "event": event, **fields}
    return {
        "pod": pod,
        "pid": PID,
        "ts_ns": ts_ns,
        "thread": thread,
        "event": event,
        "task": fields.get("task"),
        "data": json.dumps(data),
    }


def app(pod: str, ts_ns: int, event: str, **fields: Any) -> dict[str, Any]:
    """A line of the kstreams app's trace (stream thread 1)."""
    return line(pod, ts_ns, event, "StreamThread-1", **fields)


def watched(pod: str, ts_ns: int, event: str, **fields: Any) -> dict[str, Any]:
    """A line the harness's state-directory watch appends (harness/run/statedir.py)."""
    return line(pod, ts_ns, event, "statedir-watch", task=TASK, source="statedir", **fields)


def restored_and_running(pod: str) -> list[dict[str, Any]]:
    """Restoration done, its checkpoint written (the file's mtime), then the processors'
    init traced as task-running."""
    return [
        app(pod, RUNNING_NS - 3 * MS, "restore-end", task=TASK, store="balances", restored=0),
        watched(pod, RUNNING_NS - 2 * MS, "checkpoint-write", offsets=RESTORED, reason="observed"),
        app(pod, RUNNING_NS, "task-running", task=TASK),
    ]


def commit(pod: str, ts_ns: int) -> dict[str, Any]:
    """A rise of the stream thread's commit-total metric (the app's CommitWatch)."""
    return app(pod, ts_ns, "txn-commit", source="metric", commits=1)


def judge(spark: SparkSession, tmp_path: Path, lines: list[dict[str, Any]]) -> CheckResult:
    base = generate(Params(seed=1, partitions=1, events=4))
    history = replace(base, traces=[*base.traces, *lines])
    frames = load_frames(spark, history.write(tmp_path / "history"))
    return stale_checkpoint(spark, frames, Meta.from_json(history.meta))


def candidates(spark: SparkSession, tmp_path: Path) -> int:
    frames: Frames = load_frames(spark, tmp_path / "history")
    return running_with_checkpoint(frames).count()


def test_checkpoint_deleted_before_the_first_record_is_valid(
    spark: SparkSession, tmp_path: Path
) -> None:
    """(a) The 4.2.2 sequence: deleted 0.3 ms after task-running, no record processed yet.
    The thread's commit metric rises 0.1 ms after task-running (a commit made before it,
    seen by the 50 ms poll): not the task's first record."""
    pod = "pod-0-kstreams"
    got = judge(
        spark,
        tmp_path,
        [
            *restored_and_running(pod),
            commit(pod, RUNNING_NS + 100_000),
            watched(pod, RUNNING_NS + 300_000, "checkpoint-delete", reason="observed"),
            commit(pod, RUNNING_NS + 50 * MS),
            commit(pod, RUNNING_NS + 550 * MS),
        ],
    )
    assert candidates(spark, tmp_path) == 1  # what the check flagged before issue 30
    assert (got.valid, got.count) == (True, 0), got
    assert got.details == {"checkpoint_removed_before_first_record": 1}


def test_checkpoint_still_there_after_the_first_record_is_flagged(
    spark: SparkSession, tmp_path: Path
) -> None:
    """(b) KAFKA-20685 as 4.1.2 shows it: the checkpoint stays while the task processes
    and commits; it goes only at the close."""
    pod = "pod-0-kstreams"
    got = judge(
        spark,
        tmp_path,
        [
            *restored_and_running(pod),
            commit(pod, RUNNING_NS + 100_000),
            commit(pod, RUNNING_NS + 500 * MS),
            commit(pod, RUNNING_NS + 1000 * MS),
            app(pod, RUNNING_NS + 2000 * MS, "task-closed", task=TASK),
            watched(pod, RUNNING_NS + 2001 * MS, "checkpoint-write", offsets={}, reason="observed"),
        ],
    )
    assert (got.valid, got.count) == (False, 1), got
    (example,) = got.examples
    assert (example["kind"], example["pod"], example["pid"], example["task"]) == (
        "checkpoint-while-running",
        pod,
        PID,
        TASK,
    )
    assert example["file_op"]["offsets"] == RESTORED
    # The second commit after task-running stands for the first record; never removed.
    assert example["first_record"]["ts_ns"] == RUNNING_NS + 500 * MS
    assert example["removed_ns"] is None
    assert got.details["checkpoint_while_running"] == 1


def test_checkpoint_deleted_at_or_after_the_first_record_is_flagged(
    spark: SparkSession, tmp_path: Path
) -> None:
    """(c) The boundary, with the record itself traced (a dedup skip of the task): removed
    at the same nanosecond or later is flagged, one nanosecond earlier is not."""
    first = RUNNING_NS + 300_000

    def removed_at(pod: str, ts_ns: int) -> list[dict[str, Any]]:
        return [
            *restored_and_running(pod),
            app(pod, first, "dedup-skip", task=TASK, event_id="e-00001", partition=0, offset=1),
            watched(pod, ts_ns, "checkpoint-delete", reason="observed"),
        ]

    got = judge(
        spark,
        tmp_path,
        [
            *removed_at("pod-at", first),
            *removed_at("pod-after", first + 100_000),
            *removed_at("pod-before", first - 1),
        ],
    )
    assert (got.valid, got.count) == (False, 2), got
    assert {e["pod"] for e in got.examples} == {"pod-at", "pod-after"}
    assert {e["first_record"]["event"] for e in got.examples} == {"dedup-skip"}
    assert got.details["checkpoint_removed_before_first_record"] == 1


def test_a_read_of_no_file_and_an_app_delete_leave_no_file(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The legacy app (StateDirAgent) traces every checkpoint read, `{}` when there was no
    file, and Kafka Streams' own delete of it (2.x under exactly-once: right after the read).
    Before, a fault-free 2.1.1 run was flagged: each read of no file counted as a file."""
    pod = "pod-0-kstreams"
    fresh = [
        app(pod, RUNNING_NS - 2 * MS, "checkpoint-read", task=TASK, offsets={}),
        app(pod, RUNNING_NS, "task-running", task=TASK),
        commit(pod, RUNNING_NS + 100_000),
        commit(pod, RUNNING_NS + 500 * MS),
        commit(pod, RUNNING_NS + 1000 * MS),
    ]
    assert judge(spark, tmp_path / "fresh", fresh).valid
    returned = [
        app(pod, RUNNING_NS - 2 * MS, "checkpoint-read", task=TASK, offsets=RESTORED),
        app(pod, RUNNING_NS - 2 * MS + 1000, "checkpoint-delete", task=TASK, reason="app"),
        *fresh[1:],
    ]
    assert judge(spark, tmp_path / "returned", returned).valid
    kept = [returned[0], *fresh[1:]]  # a read file nobody deleted: still flagged
    assert not judge(spark, tmp_path / "kept", kept).valid
