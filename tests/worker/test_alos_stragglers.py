"""At-least-once against a member the group dropped (issue 33), the pure parts; the real
broker scenario is test_alos_zombie.py.

- A balance record that lands on the changelog after a newer one of its account (sent
  late by a member paused past its session) must not take the account back when a task
  restores or a standby replays the changelog.
- A restored task sends its balances to the changelog again before it processes a
  record: the restoration may have kept one its changelog lacks (RocksDB flushed it before
  a SIGKILL whose producer still held its record), which a redelivery only re-emits.
- A stream thread under at-least-once holds its processing while no heartbeat has been
  answered for half the session timeout: the group may have given its tasks away."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from kafka.consumer.fetcher import ConsumerRecord
from kafka.coordinator.heartbeat import Heartbeat
from worker_fakes import RecordingReader

from workloads.ledger.contract import BALANCE_STORE, DEDUP_STORE, Balance, Event, Output
from workloads.worker.collector import RecordCollector
from workloads.worker.config import WorkerConfig, parse_args
from workloads.worker.control import ControlFile
from workloads.worker.restore import ChangelogReader
from workloads.worker.state_manager import StateManager
from workloads.worker.statedir import StateDirectory
from workloads.worker.task_active import StreamTask
from workloads.worker.thread import StreamThread
from workloads.worker.trace import Tracer

ACCOUNT = "acct-00001"


def _cfg(tmp_path: Path, guarantee: str) -> WorkerConfig:
    return parse_args(["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state"),
                       "--guarantee", guarantee, "--session-timeout-ms", "10000"])


def _balance(through: int, balance: int) -> str:
    """The balance after the event at input offset `through` (the last applied)."""
    out = Output(f"e-{through}", ACCOUNT, 1, balance, 0, through, None)
    return Balance(balance, {through: out}).encode()


def _record(store: str, offset: int, key: str, value: str) -> ConsumerRecord:
    return ConsumerRecord(f"app-{store}-changelog", 0, -1, offset, 0, 0, key.encode(),
                          value.encode(), [], None, len(key), len(value), -1)


def _replayed(tmp_path: Path, guarantee: str, store: str,
              values: list[str]) -> tuple[str | None, int | None]:
    cfg = _cfg(tmp_path, guarantee)
    sm = StateManager(cfg, "0_0", 0, StateDirectory(cfg.app_dir).task_dir("0_0"),
                      Tracer(None, "pod-0"), ControlFile(None), "active")
    sm.initialize(None, delete_after_read=False)
    try:
        sm.changelog_applier(store)([_record(store, 40 + i, ACCOUNT, v)
                                     for i, v in enumerate(values)])
        return sm.stores[store].get(ACCOUNT), sm.offsets[store]
    finally:
        sm.close()


def test_a_late_older_balance_record_does_not_take_the_account_back(tmp_path: Path) -> None:
    # the owner's balances through input 10 and 20, then the dropped member's through 12
    values = [_balance(10, 100), _balance(20, 200), _balance(12, 120)]
    value, offset = _replayed(tmp_path, "at_least_once", BALANCE_STORE, values)
    assert value == _balance(20, 200), "the straggler took the balance back"
    assert offset == 42  # the store reflects the changelog through its last record
    # a newer one, and one through the same event (the same balance), still apply
    again = [_balance(20, 200), _balance(25, 250)]
    assert _replayed(tmp_path / "b", "at_least_once", BALANCE_STORE, again)[0] == again[-1]


@pytest.mark.parametrize("guarantee,store", [("exactly_once_v2", BALANCE_STORE),
                                             ("at_least_once", DEDUP_STORE)])
def test_other_changelogs_replay_as_written(tmp_path: Path, guarantee: str, store: str) -> None:
    """Under exactly-once a straggler is never read (its transaction aborts, read_committed);
    dedup entries are written once per position: the last record wins, as before."""
    values = [_balance(20, 200), _balance(12, 120)]
    assert _replayed(tmp_path, guarantee, store, values)[0] == values[-1]


class _Sends:
    """The collector's sends, recorded."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, str]] = []

    def send(self, topic: str, key: str, value: Any, partition: int | None) -> None:
        self.sent.append((topic, key, value if isinstance(value, str) else value.decode()))


def _restored_task(tmp_path: Path, guarantee: str) -> tuple[StreamTask, ChangelogReader]:
    """A task whose store holds the balance through input 100 (flushed before a crash)
    while the record after its checkpoint is the one through 95: restored, kept."""
    cfg = _cfg(tmp_path, guarantee)
    task = StreamTask(cfg, "0_0", StateDirectory(cfg.app_dir), Tracer(None, "pod-0"),
                      ControlFile(None), lambda _: None, "StreamThread-1")
    reader = cast(ChangelogReader, RecordingReader())
    assert task.try_initialize(reader)
    task.sm.stores[BALANCE_STORE].put(ACCOUNT, _balance(100, 1000))
    task.sm.changelog_applier(BALANCE_STORE)([_record(BALANCE_STORE, 7, ACCOUNT,
                                                      _balance(95, 950))])
    task.complete_restoration(reader)
    return task, reader


def test_a_restored_task_sends_its_balances_again_before_it_processes(tmp_path: Path) -> None:
    task, _ = _restored_task(tmp_path, "at_least_once")
    try:
        assert task.sm.stores[BALANCE_STORE].get(ACCOUNT) == _balance(100, 1000)
        # the redelivery of the event through 100: re-emitted from the balance, no write
        task.queue.append(_record("input", 100, ACCOUNT, Event("e-100", ACCOUNT, 1)
                                  .encode().decode()))
        sends = _Sends()
        assert task.process_one(cast(RecordCollector, sends))
        changelog = task.cfg.changelog(BALANCE_STORE)
        assert sends.sent[0] == (changelog, ACCOUNT, _balance(100, 1000)), sends.sent
        assert [s for s in sends.sent if s[0] == changelog] == sends.sent[:1]  # once
        assert task.uncommitted
        sends.sent.clear()
        task.queue.append(_record("input", 100, ACCOUNT, Event("e-100", ACCOUNT, 1)
                                  .encode().decode()))
        task.process_one(cast(RecordCollector, sends))
        assert all(s[0] != changelog for s in sends.sent), "sent again after the first"
    finally:
        task.sm.close()


def test_exactly_once_sends_nothing_again(tmp_path: Path) -> None:
    task, _ = _restored_task(tmp_path, "exactly_once_v2")
    try:
        task.queue.append(_record("input", 101, ACCOUNT, Event("e-101", ACCOUNT, 1)
                                  .encode().decode()))
        sends = _Sends()
        task.process_one(cast(RecordCollector, sends))
        changelog = task.cfg.changelog(BALANCE_STORE)
        assert len([s for s in sends.sent if s[0] == changelog]) == 1  # the event's own
    finally:
        task.sm.close()


def _thread(tmp_path: Path, guarantee: str) -> tuple[StreamThread, Heartbeat]:
    cfg = _cfg(tmp_path, guarantee)
    thread = StreamThread(cfg, 1, StateDirectory(cfg.app_dir), Tracer(None, "pod-0"),
                          ControlFile(None), lambda _: None, lambda: True, lambda: None)
    heartbeat = Heartbeat(group_id=cfg.application_id, session_timeout_ms=10_000,
                          heartbeat_interval_ms=2_000)
    thread.consumer = SimpleNamespace(_coordinator=SimpleNamespace(heartbeat=heartbeat))  # type: ignore[assignment]
    return thread, heartbeat


def test_a_thread_holds_its_processing_once_its_membership_may_have_lapsed(
    tmp_path: Path,
) -> None:
    thread, heartbeat = _thread(tmp_path, "at_least_once")
    now = time.monotonic()
    heartbeat.last_receive = now - 1.0  # answered a second ago: still a member
    assert not thread.membership.lapsed(thread.consumer)
    heartbeat.last_receive = now - 6.0  # paused past half its 10 s session
    assert thread.membership.lapsed(thread.consumer)
    thread.on_assigned(set())  # joined again: the assignment is this generation's
    assert not thread.membership.lapsed(thread.consumer)
