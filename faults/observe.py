"""What condition triggers look at: pods' trace files (tailed) and their task directories."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faults.platform import Platform
from workloads.ledger.trace_contract import (
    ASSIGNED,
    CLEANER_DELETE,
    CLIENT_STATE,
    COMMIT_EVENTS,
    LOCK_FAILED,
    MEMTABLE_FLUSH,
    RESTORE_END,
    REVOKED,
    STORE_FLUSH,
    TASK_CLOSED,
    TASK_RUNNING,
    TXN_ABORT,
    TXN_COMMIT,
)


@dataclass
class _Tail:
    path: Path
    position: int = 0
    partial: bytes = b""
    events: list[dict[str, Any]] = field(default_factory=list)


class TraceWatcher:
    """Incrementally reads every pod's trace.jsonl; answers the trigger conditions."""

    def __init__(self, platform: Platform, application_id: str) -> None:
        self.platform = platform
        self.application_id = application_id
        self._tails: dict[str, _Tail] = {}
        self._lock = threading.Lock()

    def refresh(self) -> None:
        with self._lock:
            for pod in self.platform.pods():
                tail = self._tails.setdefault(pod.name, _Tail(self.platform.trace_path(pod.name)))
                self._read_new(tail)

    def events(self, pod: str) -> list[dict[str, Any]]:
        self.refresh()
        tail = self._tails.get(pod)
        return list(tail.events) if tail else []

    def count(self, pod: str, names: tuple[str, ...], since_ns: int) -> int:
        return sum(
            1 for e in self.events(pod) if e.get("event") in names and e.get("ts_ns", 0) >= since_ns
        )

    def running_since(self, pod: str, since_ns: int) -> bool:
        """The pod traced its client RUNNING at or after `since_ns` (by wall-clock ts_ns,
        which a pod's every process shares, unlike pids, which a container reuses)."""
        return any(e.get("event") == CLIENT_STATE and e.get("to") == "RUNNING"
                   and e.get("ts_ns", 0) >= since_ns for e in self.events(pod))

    def running_tasks(self, pod: str) -> set[str]:
        """Tasks the pod's current process has made RUNNING and not revoked since."""
        events = self.events(pod)
        if not events:
            return set()
        pid = events[-1].get("pid")
        running: set[str] = set()
        for event in events:
            if event.get("pid") != pid:
                continue
            if event.get("event") == TASK_RUNNING:
                running.add(str(event.get("task")))
            elif event.get("event") == REVOKED:
                running -= set(event.get("tasks", []))
            elif event.get("event") == TASK_CLOSED:  # Kafka Streams app (sut kstreams)
                running.discard(str(event.get("task")))
        return running

    def standby_tasks(self, pod: str) -> set[str]:
        """Standbys of the pod's current process: each thread's latest assignment."""
        events = self.events(pod)
        if not events:
            return set()
        pid = events[-1].get("pid")
        latest: dict[object, list[str]] = {}
        for event in events:
            if event.get("pid") == pid and event.get("event") == ASSIGNED:
                latest[event.get("thread")] = [str(t) for t in event.get("standby") or []]
        return {task for tasks in latest.values() for task in tasks}

    def standby_elsewhere(self, pod: str) -> bool:
        """A task RUNNING in the pod has a standby in another pod that runs and is not
        paused: crashed now, the pod's task can fail over to that warm copy. The pod itself
        must run (its last process's trace says nothing once it is down or paused)."""
        target = self.platform.pod(pod)
        if not target.running or target.paused:
            return False
        running = self.running_tasks(pod)
        if not running:
            return False
        for other in self.platform.pods():
            if other.name == pod or not other.running or other.paused:
                continue
            if running & self.standby_tasks(other.name):
                return True
        return False

    def checkpoint_in_running(self, pod: str) -> bool:
        app_dir = self.platform.volume(pod) / self.application_id
        return any((app_dir / task / ".checkpoint").exists() for task in self.running_tasks(pod))

    def flushed_in_transaction(self, pod: str, every_store: bool = False) -> bool:
        """A RUNNING task's store has an SST file written after the pod's last commit: a
        memtable flush persisted writes of a transaction that is still open. With
        `every_store`, each store of that task has one: the dedup store's aborted entries
        are what outlives a replay (balances are overwritten by it)."""
        events = self.events(pod)
        if not events:
            return False
        pid = events[-1].get("pid")
        last_commit = max(
            (e.get("ts_ns", 0) for e in events
             if e.get("pid") == pid and e.get("event") in (TXN_COMMIT, TASK_RUNNING)),
            default=None,
        )
        if last_commit is None:
            return False
        app_dir = self.platform.volume(pod) / self.application_id
        for task in self.running_tasks(pod):
            # <task>/<store>/ (Python worker) or <task>/rocksdb/<store>/ (Kafka Streams);
            # a RocksDB store is the folder of a CURRENT file.
            stores = [current.parent for current in (app_dir / task).rglob("CURRENT")]
            flushed = [store for store in stores if _written_since(store, last_commit)]
            if flushed and (not every_store or len(flushed) == len(stores)):
                return True
        return False

    def flush_traced_in_transaction(self, pod: str, since_ns: int) -> bool:
        """The pod's current process traced a `memtable-flush` inside a transaction since
        `since_ns`, and that thread has not committed or aborted since: a crash now aborts
        flushed writes. Read from the trace, not from SST times, which a restore's own
        flushes also move (our worker only; Kafka Streams traces no flush)."""
        events = self.events(pod)
        if not events:
            return False
        pid = events[-1].get("pid")
        open_flush: dict[object, bool] = {}
        for e in events:
            if e.get("pid") != pid or e.get("ts_ns", 0) < since_ns:
                continue
            if e.get("event") == MEMTABLE_FLUSH and e.get("in_txn"):
                open_flush[e.get("thread")] = True
            elif e.get("event") in (TXN_COMMIT, TXN_ABORT):
                open_flush[e.get("thread")] = False
        return any(open_flush.values())

    def newest_segment_flushed(self, pod: str, since_ns: int) -> bool:
        """The last memtable flush the pod's current process traced since `since_ns` (a
        `store-flush` of a data column family, not the offsets one) filled up in the
        newest segment of a windowed or session store, and an older segment of that store
        and task has flushed before: the older one holds writes since its own flush that
        only a memtable has. A crash now leaves the newest segment durable past the older
        one (issue 49's hypothesis: from 4.3 a segmented store's changelog offset is the
        newest segment's). The ledger app's segments are a few seconds long, so the older
        one is still being written."""
        events = self.events(pod)
        if not events:
            return False
        pid = events[-1].get("pid")
        segments: dict[tuple[object, object], set[int]] = {}
        last: dict[str, Any] | None = None
        for e in events:
            if (e.get("pid") != pid or e.get("event") != STORE_FLUSH or not e.get("segment")
                    or e.get("cf") == "offsets"):
                continue
            start = _segment_start(str(e["segment"]))
            if start is None:
                continue
            segments.setdefault((e.get("task"), e.get("store")), set()).add(start)
            last = e
        if last is None or last.get("ts_ns", 0) < since_ns:
            return False
        if last.get("reason") != "WRITE_BUFFER_FULL":  # a commit's or a close's: all of them
            return False
        seen = segments[(last.get("task"), last.get("store"))]
        start = _segment_start(str(last["segment"]))
        return start == max(seen) and len(seen) > 1

    def cleaner_deleted(self, pod: str, since_ns: int) -> int:
        """Task directories the pod's state-directory cleaner deleted since `since_ns`:
        a task that left the pod's threads stayed away past the cleaner's delay."""
        return self.count(pod, (CLEANER_DELETE,), since_ns)

    def _each_pod_since(self, since_ns: int) -> list[list[dict[str, Any]]]:
        """Each pod's trace events from `since_ns` on, in the order its processes wrote
        them: the conditions below pair events of one process, so nothing is merged or
        sorted across pods (they are polled ten times a second)."""
        self.refresh()
        with self._lock:
            return [[e for e in t.events if e.get("ts_ns", 0) >= since_ns]
                    for t in self._tails.values()]

    def contended(self, since_ns: int) -> int:
        """Standby lock failures in any pod since `since_ns`: a standby created while
        another thread of its process still held the task directory (KAFKA-8187's first
        step). The fixed worker traces them too (it retries the lock)."""
        return sum(1 for events in self._each_pod_since(since_ns) for e in events
                   if e.get("event") == LOCK_FAILED and e.get("kind") == "standby")

    def cleaned(self, since_ns: int) -> int:
        """Cleaner deletions in any pod since `since_ns` of a task directory whose standby
        (same process) failed to take the lock before: KAFKA-8187's forgotten standby, its
        directory gone. The fixed worker retries and holds the lock, the cleaner leaves
        the directory alone, and a step waiting for this fires at its timeout."""
        deleted = 0
        for events in self._each_pod_since(since_ns):
            contended: set[tuple[object, object]] = set()
            for e in events:
                key = (e.get("pid"), e.get("task"))
                if e.get("event") == LOCK_FAILED and e.get("kind") == "standby":
                    contended.add(key)
                elif e.get("event") == CLEANER_DELETE and key in contended:
                    contended.discard(key)
                    deleted += 1
        return deleted

    def holds(self, condition: str, pod: str, since_ns: int, count: int) -> bool:
        if condition == "restored":
            return self.count(pod, (RESTORE_END,), since_ns) >= count
        if condition == "commits":
            return self.count(pod, COMMIT_EVENTS, since_ns) >= count
        if condition == "checkpoint-in-running":
            return self.checkpoint_in_running(pod)
        if condition == "flushed-in-txn":
            return self.flushed_in_transaction(pod)
        if condition == "all-flushed-in-txn":
            return self.flushed_in_transaction(pod, every_store=True)
        if condition == "flush-traced-in-txn":
            return self.flush_traced_in_transaction(pod, since_ns)
        if condition == "newest-segment-flushed":
            return self.newest_segment_flushed(pod, since_ns)
        if condition == "standby-elsewhere":
            return self.standby_elsewhere(pod)
        if condition == "cleaner-deleted":
            return self.cleaner_deleted(pod, since_ns) >= count
        if condition == "contended":
            return self.contended(since_ns) >= count
        if condition == "cleaned":
            return self.cleaned(since_ns) >= count
        raise ValueError(f"unknown trigger condition {condition!r}")

    @staticmethod
    def _read_new(tail: _Tail) -> None:
        try:
            with open(tail.path, "rb") as handle:
                handle.seek(tail.position)
                chunk = handle.read()
        except FileNotFoundError:
            return
        tail.position += len(chunk)
        data = tail.partial + chunk
        lines = data.split(b"\n")
        tail.partial = lines.pop()  # a line still being written
        for line in lines:
            if line.strip():
                try:
                    tail.events.append(json.loads(line))
                except ValueError:
                    continue  # a torn line from a SIGKILLed writer


def _segment_start(segment: str) -> int | None:
    """A segment folder's start, `<store>.<start ms>` (Kafka Streams' segment names)."""
    _, _, start = segment.rpartition(".")
    return int(start) if start.isdigit() else None


def _written_since(store: Path, since_ns: int) -> bool:
    for sst in store.glob("*.sst"):
        try:
            if sst.stat().st_mtime_ns > since_ns:
                return True
        except FileNotFoundError:
            continue  # compacted away while we looked
    return False
