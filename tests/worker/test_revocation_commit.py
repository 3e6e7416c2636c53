"""At-least-once, the commit on revocation (the rebalance listener's path): the offsets are
committed first, the checkpoint written after (Kafka Streams' commit, then postCommit).

The thread wrote its "commit" checkpoint while preparing the revocation, before the
listener committed the offsets: a commit that failed then left a checkpoint claiming
changelog records of input that was never committed, and the listener's error came out of
poll() and killed the thread. Now a failed commit writes no checkpoint, closes the tasks
dirty (task migrated) and the listener returns: the thread rejoins.

Pure logic: a real task and its stores, the consumer's coordinator and the producer faked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import kafka.errors as Errors
import pytest
from kafka import TopicPartition
from worker_fakes import RecordingReader

from workloads.worker.checkpoint import read_checkpoint
from workloads.worker.config import parse_args
from workloads.worker.control import ControlFile
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.task_active import CLOSED, RUNNING, SUSPENDED, StreamTask
from workloads.worker.thread import StreamThread
from workloads.worker.thread_listener import StreamThreadListener
from workloads.worker.thread_tasks import TaskManager
from workloads.worker.trace import Tracer, read_trace

CHANGELOG_OFFSET = 7  # where the task's changelog records landed since the last commit
INPUT_OFFSET = 11  # the input position the revocation commits


class _Collector:
    """The record collector after a flush: the task's changelog records landed at 7."""

    def __init__(self, landed: dict[tuple[str, int], int]) -> None:
        self.landed, self.count = landed, 0

    def take_offsets(self) -> dict[tuple[str, int], int]:
        return dict(self.landed)

    def discard(self) -> None:
        self.landed = {}


class _Coordinator:
    """The consumer coordinator's commit the listener awaits: it records what the task's
    checkpoint claimed at the moment of the commit, then succeeds or fails."""

    def __init__(self, task: StreamTask, error: Exception | None) -> None:
        self.task, self.error = task, error
        self.committed: list[dict[TopicPartition, Any]] = []
        self.checkpoint_at_commit: dict[tuple[str, int], int] | None = None

    async def _commit_offsets_sync_async(self, offsets: dict[TopicPartition, Any]) -> None:
        self.checkpoint_at_commit = read_checkpoint(self.task.sm.checkpoint_path)
        if self.error is not None:
            raise self.error
        self.committed.append(offsets)


def _revoking(tmp_path: Path, error: Exception | None
              ) -> tuple[StreamThread, StreamTask, _Coordinator, Path]:
    """A thread under at-least-once with one RUNNING task that processed input up to 10
    since its last commit, its changelog records at 7."""
    cfg = parse_args(["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state"),
                      "--guarantee", "at_least_once"])
    trace = tmp_path / "trace.jsonl"
    tracer, control, sdir = Tracer(trace, "pod-0"), ControlFile(None), StateDirectory(cfg.app_dir)
    reader = cast(ChangelogReader, RecordingReader())
    thread = StreamThread(cfg, 1, sdir, tracer, control, lambda _: None, lambda: True,
                          lambda: None)
    thread.tm = TaskManager(cfg, sdir, tracer, control, reader, lambda _: None, thread.tname)
    task = StreamTask(cfg, "0_0", sdir, tracer, control, lambda _: None, thread.tname)
    assert task.try_initialize(reader)
    task.complete_restoration(reader)  # the "restored" checkpoint: no changelog offsets
    assert task.state == RUNNING
    thread.tm.active[task.task] = task
    task.next_offset, task.uncommitted = INPUT_OFFSET, True
    landed = {task.sm.tp(store): CHANGELOG_OFFSET for store in task.sm.logged}
    thread.collector = _Collector(landed)  # type: ignore[assignment]
    thread.producer = SimpleNamespace(flush=lambda: None)  # type: ignore[assignment]
    coordinator = _Coordinator(task, error)
    thread.consumer = SimpleNamespace(_coordinator=coordinator)  # type: ignore[assignment]
    return thread, task, coordinator, trace


def _revoke(thread: StreamThread, task: StreamTask) -> None:
    asyncio.run(StreamThreadListener(thread).on_partitions_revoked({task.input_tp}))


def _claims(task: StreamTask) -> dict[tuple[str, int], int]:
    return read_checkpoint(task.sm.checkpoint_path) or {}


def test_the_offsets_are_committed_before_the_checkpoint_is_written(tmp_path: Path) -> None:
    thread, task, coordinator, trace = _revoking(tmp_path, None)
    try:
        _revoke(thread, task)
        assert coordinator.committed == [{task.input_tp: (INPUT_OFFSET, "", -1)}]
        assert coordinator.checkpoint_at_commit == {}, (
            "the checkpoint claimed the changelog records before their input was committed: "
            f"{coordinator.checkpoint_at_commit}")
        # after the commit: checkpointed, then suspended (kept for a re-assignment)
        assert set(_claims(task).values()) == {CHANGELOG_OFFSET}
        assert task.state == SUSPENDED
        events = [e["event"] for e in read_trace(trace)]
        assert "commit" in events and "task-migrated" not in events
        reasons = [e["reason"] for e in read_trace(trace) if e["event"] == "checkpoint-write"]
        assert reasons == ["restored", "commit", "suspend"]
    finally:
        thread.tm.close_all(clean=False)


@pytest.mark.parametrize("error", [
    Errors.CommitFailedError(Errors.UnknownMemberIdError()),
    Errors.KafkaTimeoutError("commit not done"),
], ids=["commit-failed", "timeout"])
def test_a_failed_commit_writes_no_checkpoint_and_closes_the_tasks_dirty(
    tmp_path: Path, error: Exception
) -> None:
    thread, task, coordinator, trace = _revoking(tmp_path, error)
    try:
        _revoke(thread, task)  # the listener's error no longer reaches poll()
        assert coordinator.checkpoint_at_commit == {}
        assert _claims(task) == {}, (
            f"a checkpoint claims changelog offsets never committed: {_claims(task)}")
        assert task.state == CLOSED and not thread.tm.active, "tasks not closed dirty"
        events = read_trace(trace)
        assert [e["error"] for e in events if e["event"] == "task-migrated"] == [
            type(error).__name__]
        assert "commit" not in [e["event"] for e in events]
        assert [e["reason"] for e in events if e["event"] == "checkpoint-write"] == ["restored"]
        assert thread.state == "PARTITIONS_REVOKED"
    finally:
        thread.tm.close_all(clean=False)
