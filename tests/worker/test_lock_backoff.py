"""A task whose directory lock another thread holds no longer stalls its stream thread
(issue 53: `all --seed 4 --guarantee at_least_once` beside a second run ended "pods not
RUNNING after 120s", two of pod-1's threads having tried the locks of standbys 0_0 and
0_4 613,000 times in two minutes). The thread polled its main and restore consumers
without blocking whenever a standby ran, and tried the lock on every turn of that loop,
tracing each try. Now it tries after a back-off (Kafka Streams' KAFKA-17109), the loop
blocks in its poll in between, and its other tasks are served meanwhile.

The real StreamThread loop, TaskManager, StandbyTask, StateDirectory and stores; the
Kafka clients are fakes whose polls move a hand-turned clock by their timeout, as a poll
with nothing to return waits it out."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from fake_clock import FakeClock
from kafka import TopicPartition
from kafka.structs import MemberState

from workloads.worker import bugs, lock_backoff
from workloads.worker.config import WorkerConfig, parse_args
from workloads.worker.control import ControlFile
from workloads.worker.lock_backoff import LockBackoff
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.thread import StreamThread
from workloads.worker.thread_tasks import TaskManager
from workloads.worker.trace import Tracer, read_trace

HOLDER = "StreamThread-2"
HOLD_S = 5.0
MAX_LOOPS = 1000  # far more turns than HOLD_S of 50 ms polls: the bound of a spinning loop


class _CountingStateDirectory(StateDirectory):
    def __init__(self, app_dir: Path) -> None:
        super().__init__(app_dir)
        self.tries: Counter[tuple[str, str]] = Counter()

    def lock(self, task: str, owner: str) -> bool:
        self.tries[task, owner] += 1
        return super().lock(task, owner)


class _Consumer:
    """The stream thread's consumer, a stable member with nothing to fetch."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.timeouts: list[int] = []
        # joined at once (the loop's first turn has no group snapshot yet)
        self._coordinator = SimpleNamespace(coordinator_unknown=lambda: False,
                                            generation_if_stable=lambda: None,
                                            poll=lambda timeout_ms: True)

    def poll(self, timeout_ms: int) -> dict[TopicPartition, list[Any]]:
        self.timeouts.append(timeout_ms)
        self.clock.sleep(timeout_ms / 1000)
        return {}

    def group_metadata(self) -> SimpleNamespace:
        return SimpleNamespace(state=MemberState.STABLE)

    def assignment(self) -> set[TopicPartition]:
        return set()

    def paused(self) -> set[TopicPartition]:
        return set()


class _Reader:
    """The changelog reader with standbys only: it reads their changelogs for ever."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.entries: dict[TopicPartition, str] = {}
        self.completed: set[TopicPartition] = set()
        self.reads: Counter[str] = Counter()  # reads per standby task

    def register(self, task: str, store: str, tp: TopicPartition, *_: Any, **__: Any) -> None:
        self.entries[tp] = task

    def unregister(self, tps: list[TopicPartition]) -> None:
        for tp in tps:
            self.entries.pop(tp, None)

    def restoring(self) -> bool:
        return False

    def has_work(self) -> bool:
        return bool(self.entries)

    def poll(self, timeout_ms: int) -> tuple[list[TopicPartition], list[TopicPartition]]:
        self.clock.sleep(timeout_ms / 1000)
        for task in set(self.entries.values()):
            self.reads[task] += 1
        return [], []


def _cfg(tmp_path: Path, *extra: str) -> WorkerConfig:
    return parse_args(["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state"),
                       "--guarantee", "at_least_once", "--standbys", "1", *extra])


def _thread(tmp_path: Path, clock: FakeClock, standbys: tuple[str, ...]
            ) -> tuple[StreamThread, _CountingStateDirectory, _Consumer, _Reader]:
    cfg = _cfg(tmp_path)
    tracer, control = Tracer(tmp_path / "trace.jsonl", "pod-1"), ControlFile(None)
    sdir = _CountingStateDirectory(cfg.app_dir)
    thread = StreamThread(cfg, 1, sdir, tracer, control, lambda _: None, lambda: True,
                          lambda: None)
    reader = _Reader(clock)
    thread.reader = cast(ChangelogReader, reader)
    thread.tm = TaskManager(cfg, sdir, tracer, control, thread.reader, lambda _: None,
                            thread.tname)
    thread.tm.backoff = LockBackoff(clock, random.Random(4))
    thread.assignor = SimpleNamespace(standby_tasks=standbys)  # type: ignore[assignment]
    thread.producer = SimpleNamespace(flush=lambda: None)  # type: ignore[assignment]
    thread.collector = SimpleNamespace(  # type: ignore[assignment]
        take_offsets=lambda: {}, discard=lambda: None)
    consumer = _Consumer(clock)
    thread.consumer = consumer  # type: ignore[assignment]
    thread.on_assigned(set())  # the listener got the assignment: standbys only
    return thread, sdir, consumer, reader


def test_a_held_standby_lock_is_retried_after_a_back_off_while_the_loop_serves_the_rest(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    thread, sdir, consumer, reader = _thread(tmp_path, clock, ("0_0", "0_1"))
    assert sdir.lock("0_0", HOLDER)  # another thread of the pod still closes 0_0
    try:
        loops = 0
        while clock.now < HOLD_S and loops < MAX_LOOPS:
            thread._run_once()
            loops += 1
        held_loops, held_tries = loops, sdir.tries["0_0", thread.tname]
        assert held_loops < MAX_LOOPS, f"the loop spun: {held_tries} lock tries"
        # It blocked in its main poll on every turn: nothing restores, 0_1 is a standby.
        assert consumer.timeouts and min(consumer.timeouts) > 0
        # Tries at 0 s, then after 1-3 s, then 2-6 s more: two or three within 5 s.
        assert 2 <= held_tries <= 3, held_tries
        # Meanwhile the other standby was read on every turn.
        assert reader.reads["0_1"] == held_loops
        assert thread.state != "RUNNING"  # a standby without its lock keeps it from it
        sdir.unlock("0_0", HOLDER)
        # The next try after its back-off (at most 10 s) takes the lock.
        while thread.state != "RUNNING" and loops < 2 * MAX_LOOPS:
            thread._run_once()
            loops += 1
        assert thread.state == "RUNNING"
        assert sdir.owner("0_0") == thread.tname and thread.tm.standby["0_0"].initialized
        assert clock.now < HOLD_S + lock_backoff.MAX_S + 1
        assert thread.tm.backoff.waiting() == []
        traced = [e for e in read_trace(tmp_path / "trace.jsonl")
                  if e["event"] == "lock-failed"]
        # One line per failed try, numbered: the trace says how long the streak ran.
        assert [(e["task"], e["kind"], e["attempt"]) for e in traced] == [
            ("0_0", "standby", n) for n in range(1, held_tries + 1)]
    finally:
        thread.tm.close_all(clean=False)


def test_a_task_that_leaves_the_thread_ends_its_streak(tmp_path: Path) -> None:
    clock = FakeClock()
    thread, sdir, _consumer, _reader = _thread(tmp_path, clock, ("0_0",))
    assert sdir.lock("0_0", HOLDER)
    try:
        thread._run_once()
        assert thread.tm.backoff.waiting() == ["0_0"]
        thread.tm.handle_assignment(set(), set())  # 0_0 went to another pod
        assert thread.tm.backoff.waiting() == []
        thread.tm.handle_assignment(set(), {"0_0"})  # and came back: tried at once
        thread.tm.try_initialize()
        assert sdir.tries["0_0", thread.tname] == 2
    finally:
        thread.tm.close_all(clean=False)


def test_kafka_8187_standby_still_tries_its_lock_once(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, "--bugs", bugs.KAFKA_8187)
    clock = FakeClock()
    tracer, control = Tracer(tmp_path / "trace.jsonl", "pod-1"), ControlFile(None)
    sdir = _CountingStateDirectory(cfg.app_dir)
    tm = TaskManager(cfg, sdir, tracer, control, cast(ChangelogReader, _Reader(clock)),
                     lambda _: None, "StreamThread-1")
    tm.backoff = LockBackoff(clock, random.Random(4))
    assert sdir.lock("0_0", HOLDER)
    tm.handle_assignment(set(), {"0_0"})
    for _ in range(5):
        clock.sleep(lock_backoff.MAX_S)
        tm.try_initialize()
    assert sdir.tries["0_0", "StreamThread-1"] == 1 and tm.standby["0_0"].gave_up
    assert [e["attempt"] for e in read_trace(tmp_path / "trace.jsonl")
            if e["event"] == "lock-failed"] == [1]


def test_back_off_doubles_from_one_second_up_to_ten_with_jitter() -> None:
    clock = FakeClock()
    backoff = LockBackoff(clock, random.Random(1))
    for attempts, (low, high) in enumerate([(1, 3), (2, 6), (4, 10), (5, 10), (5, 10)], 1):
        assert backoff.failed("0_0") == attempts
        delays = [backoff.delay_s(attempts) for _ in range(200)]
        assert low <= min(delays) and max(delays) <= high
    assert not backoff.may_try("0_0")
    clock.sleep(lock_backoff.MAX_S)
    assert backoff.may_try("0_0")
    backoff.end("0_0")
    assert backoff.failed("0_0") == 1
