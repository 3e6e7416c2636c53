"""Task migration, the pure part (the broker scenario is test_task_migrated_rejoin.py): a
stream thread whose commit failed closes its tasks dirty and rejoins the group, and never
seeks a partition its consumer no longer owns (kafka-python: `ValueError: Unassigned
partition`, which killed the thread after a pause past the session). And a member the
group dropped is not taken for a zombie while it rejoins (it died "fenced by a newer
incarnation", its own join being that incarnation)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

import kafka.errors as Errors
import pytest
from kafka import TopicPartition
from kafka.structs import MemberState
from worker_fakes import RecordingReader

from workloads.worker import clients
from workloads.worker.config import WorkerConfig, parse_args
from workloads.worker.control import ControlFile
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.thread import StreamThread
from workloads.worker.thread_tasks import TaskManager
from workloads.worker.trace import Tracer


class _Consumer:
    """What the thread asks of its consumer around an assignment, as kafka-python answers."""

    def __init__(self, owned: set[TopicPartition]) -> None:
        self.owned = set(owned)
        self.seeks: list[TopicPartition] = []
        self.rejoins = 0
        self._coordinator = SimpleNamespace(request_rejoin=self._request_rejoin)

    def _request_rejoin(self) -> None:
        self.rejoins += 1

    def assignment(self) -> set[TopicPartition]:
        return set(self.owned)

    def committed(self, tp: TopicPartition) -> int:
        return 5

    def _check(self, tp: TopicPartition) -> None:
        if tp not in self.owned:
            raise ValueError("Unassigned partition")

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self._check(tp)
        self.seeks.append(tp)

    def seek_to_beginning(self, tp: TopicPartition) -> None:
        self.seek(tp, 0)

    def pause(self, *tps: TopicPartition) -> None:
        for tp in tps:
            self._check(tp)


def _thread(tmp_path: Path, guarantee: str, owned: set[TopicPartition]
            ) -> tuple[StreamThread, _Consumer, WorkerConfig]:
    cfg = parse_args(["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state"),
                      "--guarantee", guarantee])
    tracer, control, sdir = Tracer(None, "pod-0"), ControlFile(None), StateDirectory(cfg.app_dir)
    thread = StreamThread(cfg, 1, sdir, tracer, control, lambda _: None, lambda: True,
                          lambda: None)
    thread.tm = TaskManager(cfg, sdir, tracer, control, cast(ChangelogReader, RecordingReader()),
                            lambda _: None, thread.tname)
    thread.assignor = SimpleNamespace(standby_tasks=())  # type: ignore[assignment]
    thread.collector = SimpleNamespace(discard=lambda: None)  # type: ignore[assignment]
    consumer = _Consumer(owned)
    thread.consumer = consumer  # type: ignore[assignment]
    return thread, consumer, cfg


def test_a_migrated_thread_rejoins_and_applies_no_assignment_of_its_own(tmp_path: Path) -> None:
    """The commit failed (unknown member); the next poll, rejoining, drops the partition
    (on_partitions_lost) before the group assigns anything: nothing is sought."""
    thread, consumer, cfg = _thread(tmp_path, "at_least_once", set())
    tp = TopicPartition(cfg.input_topic, 0)
    consumer.owned = {tp}
    thread._assigned_once = True
    thread._task_migrated(Errors.CommitFailedError(Errors.UnknownMemberIdError()))
    assert consumer.rejoins == 1, "a migrated thread must rejoin the group"
    assert thread._pending is None, "the tasks come back with the rejoin's assignment only"
    assert not thread._assigned_once  # RUNNING waits for that assignment
    consumer.owned.clear()  # the rejoin's on_partitions_lost
    if thread._pending is not None:  # as _run_once after its poll
        thread._apply_assignment()
    assert consumer.seeks == [] and not thread.tm.active


def test_an_assignment_applies_only_to_the_partitions_still_owned(tmp_path: Path) -> None:
    thread, consumer, cfg = _thread(tmp_path, "exactly_once_v2", set())
    tp0, tp1 = TopicPartition(cfg.input_topic, 0), TopicPartition(cfg.input_topic, 1)
    consumer.owned = {tp1}  # a second rejoin in the same loop dropped tp0
    thread._pending = {tp0, tp1}
    assert thread._apply_assignment() == {tp1}
    assert consumer.seeks == [tp1]
    assert sorted(thread.tm.active) == ["0_1"]


class _Coordinator:
    """kafka-python's group coordinator as the zombie check reads it."""

    def __init__(self, state: MemberState, member_id: str, heartbeat_enabled: bool) -> None:
        self.state, self._heartbeat_enabled = state, heartbeat_enabled
        self._generation = SimpleNamespace(member_id=member_id)

    def generation_if_stable(self) -> SimpleNamespace | None:
        return self._generation if self.state is MemberState.STABLE else None


@pytest.mark.parametrize("state,member_id,zombie", [
    # a heartbeat answered "unknown member": generation reset, heartbeats stopped, rejoining
    (MemberState.UNJOINED, "", False),
    # FencedInstanceId: still stable, heartbeats stopped: ask the group
    (MemberState.STABLE, "pod-0-StreamThread-1-old", True),
], ids=["dropped", "fenced"])
def test_only_a_stable_member_whose_heartbeats_stopped_asks_whether_it_is_a_zombie(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: MemberState, member_id: str,
    zombie: bool,
) -> None:
    asked: list[str | None] = []

    def newer_incarnation(cfg: WorkerConfig, instance_id: str, member: str | None) -> bool:
        asked.append(member)
        return True  # the group lists our instance id under another member id

    monkeypatch.setattr(clients, "newer_incarnation", newer_incarnation)
    thread, consumer, _ = _thread(tmp_path, "exactly_once_v2", set())
    consumer._coordinator = _Coordinator(state, member_id, heartbeat_enabled=False)  # type: ignore[assignment]
    # the loop's snapshot was taken before the heartbeat reset the generation
    thread._group_meta = SimpleNamespace(state=MemberState.STABLE)  # type: ignore[assignment]
    assert thread.membership.heartbeat_fenced(thread.consumer) is zombie
    assert asked == ([member_id] if zombie else [])
