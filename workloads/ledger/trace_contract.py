"""The trace contract: every event a system under test writes to `pods/<pod>/trace.jsonl`
(and the harness's state-directory watch to `pods/<pod>/statedir.jsonl`), its fields and
who writes it. The source of the table in results/README.md ("Trace events").

Every line is one JSON object: the envelope (`ENVELOPE`: `ts_ns`, `pod`, `pid`, `thread`,
`event`) and the event's own fields. `thread` is `main`, `global`, `cleaner`,
`StreamThread-<n>` (the Kafka Streams app may also write `StateUpdater-<n>`), or
`statedir-watch` for the harness's lines.

Readers (the nemesis conditions in faults/observe.py, the checker, the reports) name
events by the constants below, never by string. Writers are other programs (the Java
apps) or must not import the harness (the Python worker), so they keep their literals;
tests/test_trace_contract.py scans them and fails when one writes an event, or a field,
this module does not declare, or when a declared event has no writer.

Like contract.py this imports nothing of kchaos: a new system under test reads it to learn
what to trace.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

ENVELOPE: Final = ("ts_ns", "pod", "pid", "thread", "event")


class Emitter(enum.Flag):
    """Who writes an event."""

    NOBODY = 0
    WORKER = enum.auto()  # the Python worker, workloads/worker (Tracer.emit)
    KSTREAMS = enum.auto()  # the Kafka Streams app from 3.7, workloads/kstreams (trace.emit)
    KSTREAMS_LEGACY = enum.auto()  # the app for 2.1 to 3.6, workloads/kstreams-legacy
    STATEDIR = enum.auto()  # the harness's state-directory watch, harness/run/statedir.py


WORKER: Final = Emitter.WORKER
KSTREAMS_APPS: Final = Emitter.KSTREAMS | Emitter.KSTREAMS_LEGACY
STATEDIR: Final = Emitter.STATEDIR


@dataclass(frozen=True)
class TraceEvent:
    """One event: `fields` (beyond the envelope) by name, with what each holds and, where
    the writers differ, which writes it; `reserved` says why an event nobody writes yet
    is declared (empty for every event someone writes)."""

    name: str
    emitters: Emitter
    doc: str
    fields: Mapping[str, str]
    reserved: str = ""


_EVENTS: dict[str, TraceEvent] = {}


def _event(name: str, emitters: Emitter, doc: str, fields: Mapping[str, str] | None = None,
           reserved: str = "") -> str:
    if name in _EVENTS:
        raise ValueError(f"trace event {name!r} declared twice")
    if not emitters and not reserved:
        raise ValueError(f"trace event {name!r}: nobody writes it and no reason is given")
    _EVENTS[name] = TraceEvent(name, emitters, doc, MappingProxyType(dict(fields or {})),
                               reserved)
    return name


_TASK = {"task": "task id `0_<partition>`; `global` for the global store"}
_OFFSETS = {"offsets": "{changelog-partition-name: offset} (checkpoint offsets: the last "
                       "changelog record the store reflects; restoration resumes at +1)"}
_REASON = {"reason": "why (free text; `observed` from the state-directory watch)"}
_SOURCE = {"source": "`statedir` (the watch) or `metric` (the kstreams commit watch)"}
_DEDUP = {**_TASK, "event_id": "the input event's id",
          "partition": "input partition", "offset": "input offset"}

# -- the client and its threads ----------------------------------------------------------

CLIENT_STATE: Final = _event(
    "client-state", WORKER | KSTREAMS_APPS,
    "the client's state changed (the kstreams apps' state listener; also PENDING_ERROR)",
    {"from": "previous state", "to": "CREATED, REBALANCING, RUNNING, PENDING_SHUTDOWN, "
                                     "ERROR, NOT_RUNNING"})
APP_CONFIG: Final = _event(
    "app-config", Emitter.KSTREAMS_LEGACY,
    "once at start: what the legacy app chose for its release (docs/kstreams.md)",
    {"release": "Kafka Streams release", "generation": "source tree",
     "guarantee": "processing guarantee used", "guarantee_asked": "the harness's guarantee",
     "static_membership": "group.instance.id set",
     "cannot_trace": "events this release has no listener for"})
FATAL: Final = _event(
    "fatal", WORKER | KSTREAMS_APPS,
    "the process (or a thread) died of an error, or the watchdog found a thread stalled",
    {"error": "what happened"})
ASSIGNED: Final = _event(
    "assigned", WORKER, "a stream thread's new assignment",
    {"active": "[task]", "standby": "[task]"})
REVOKED: Final = _event("revoked", WORKER, "tasks taken from a stream thread",
                        {"tasks": "[task]"})
CONSUMER_REPLACED: Final = _event(
    "consumer-replaced", WORKER,
    "a stream thread replaced its consumer (no coordinator, or unstable for too long)",
    {**_REASON})
TASK_MIGRATED: Final = _event(
    "task-migrated", WORKER,
    "a commit failed (in the loop or a revocation): the thread closed its tasks dirty, "
    "wrote no checkpoint, and rejoins the group",
    {"error": "the exception's type name"})
CLEANER_DELETE: Final = _event(
    "cleaner-delete", WORKER | Emitter.KSTREAMS_LEGACY,
    "the state-directory cleaner deleted an unowned task directory (thread `cleaner`; "
    "legacy app: from StateDirectory's \"Deleting obsolete state directory\" log line)",
    {**_TASK, "age_s": "how long the directory had been unowned"})

# -- a task's store: init, checkpoints, restoration ------------------------------------

TASK_INIT: Final = _event(
    "task-init", WORKER, "a task's store opened (the global store: task `global`, store "
    "`accounts`)",
    {**_TASK, "kind": "active, standby or global", "store": "store name",
     "checkpoint": "the checkpoint offset trusted, or null",
     "digest": "store digest (workloads.ledger.contract.store_digest)",
     "entries": "entries in the store"})
CHECKPOINT_READ: Final = _event(
    "checkpoint-read", WORKER | Emitter.KSTREAMS_LEGACY,
    "a task read its `.checkpoint` (legacy app: OffsetCheckpoint.read, StateDirAgent; `{}`: "
    "no file)",
    {**_TASK, **_OFFSETS,
     "kind": "`standby-creation` when a standby reads it before its lock (KAFKA-8187); "
     "the worker only"})
CHECKPOINT_WRITE: Final = _event(
    "checkpoint-write", WORKER | STATEDIR,
    "a `.checkpoint` was written (the watch: one appeared or changed, at its mtime)",
    {**_TASK, **_OFFSETS, **_REASON, **_SOURCE})
CHECKPOINT_DELETE: Final = _event(
    "checkpoint-delete", WORKER | STATEDIR | Emitter.KSTREAMS_LEGACY,
    "a `.checkpoint` was deleted (the watch: it is gone, at the task folder's mtime when "
    "newer)", {**_TASK, **_REASON, **_SOURCE})
CHECKPOINT_DELAY: Final = _event(
    "checkpoint-delay", WORKER,
    "the control-file hook slept before a checkpoint write",
    {**_TASK, "delay_ms": "how long", **_REASON})
WIPE: Final = _event("wipe", WORKER, "a task's store was wiped", {**_TASK, **_REASON})
DIR_LOCKED: Final = _event(
    "dir-locked", Emitter.KSTREAMS_LEGACY,
    "a task directory's lock was taken (StateDirectory.lock, StateDirAgent): by a stream "
    "thread, or by the cleaner (thread `cleaner`) for each unowned directory it looks at",
    dict(_TASK))
CLEANER_PASS: Final = _event(
    "cleaner-pass", Emitter.KSTREAMS_LEGACY,
    "a pass of the state-directory cleaner began or ended (StateDirectory.cleanRemovedTasks, "
    "StateDirAgent; thread `cleaner`): its `cleaner-delete`s and `dir-locked`s lie between",
    {"phase": "start or end"})
LOCK_FAILED: Final = _event(
    "lock-failed", WORKER | Emitter.KSTREAMS_LEGACY,
    "a task could not take its directory's lock (legacy app: from AssignedTasks' TRACE "
    "line \"Could not create ... due to LockException; will retry\", logged up to 2.5; "
    "the worker: each try, after a back-off, `attempt` counting the failures in a row)",
    {**_TASK, "kind": "active or standby",
     "attempt": "worker: failed tries in a row, 1 the first (the legacy app: none)"})
SST_FILE: Final = _event(
    "sst-file", STATEDIR, "a new SST file under a task directory, at its mtime",
    {**_TASK, "store": "store folder", "file": "file name", "bytes": "its size", **_SOURCE})
MEMTABLE_FLUSH: Final = _event(
    "memtable-flush", WORKER,
    "a store's memtable filled up and began a background flush (exactly-once only)",
    {**_TASK, "store": "store name", "in_txn": "inside an open transaction"})
STORE_FLUSH: Final = _event(
    "store-flush", Emitter.KSTREAMS,
    "RocksDB completed a memtable flush (thread `rocksdb`): with the write-ahead log off, "
    "what the store or segment holds of that column family is durable from here on",
    {**_TASK, "store": "store name", "segment": "segment folder (`<store>.<segment start>`) "
     "of a windowed or session store; null for a key-value store",
     "reason": "RocksDB's FlushReason (WRITE_BUFFER_FULL, MANUAL_FLUSH, SHUTDOWN, ...)",
     "cf": "column family (from 4.3 a store keeps its changelog offsets in `offsets`)",
     "largest_seqno": "the flushed memtable's largest sequence number"})
RESTORE_START: Final = _event(
    "restore-start", WORKER | KSTREAMS_APPS,
    "a changelog partition's restoration began (kstreams: thread `StateUpdater-<n>` "
    "with the state updater)",
    {**_TASK, "store": "store name", "partition": "changelog partition",
     "from_offset": "first offset read", "end_offset": "end offset aimed at"})
RESTORE_END: Final = _event(
    "restore-end", WORKER | KSTREAMS_APPS, "a changelog partition's restoration ended",
    {**_TASK, "store": "store name", "partition": "changelog partition",
     "restored": "records restored",
     "offset": "last offset restored (kstreams: the last batch's end offset, or null)"})
RESTORE_SUSPENDED: Final = _event(
    "restore-suspended", KSTREAMS_APPS,
    "a restoration stopped before its end (the task was revoked)",
    {**_TASK, "store": "store name", "restored": "records restored"})
STANDBY_UPDATE_START: Final = _event(
    "standby-update-start", Emitter.KSTREAMS,
    "a standby began updating a store (StandbyUpdateListener, 3.7 on)",
    {**_TASK, "store": "store name", "from_offset": "first offset read"})
STANDBY_UPDATE_SUSPENDED: Final = _event(
    "standby-update-suspended", Emitter.KSTREAMS, "a standby stopped updating a store",
    {**_TASK, "store": "store name", "offset": "the store's offset",
     "reason": "MIGRATED or PROMOTED"})
GLOBAL_RESTORE_START: Final = _event(
    "global-restore-start", WORKER | KSTREAMS_APPS, "the global store's restoration began",
    {"from_offset": "first offset read", "end_offset": "end offset aimed at"})
GLOBAL_RESTORE_END: Final = _event(
    "global-restore-end", WORKER | KSTREAMS_APPS, "the global store's restoration ended",
    {"from_offset": "first offset read (worker)", "end_offset": "end offset (worker)",
     "restored": "records restored", "offset": "last offset restored (kstreams)"})
GLOBAL_INVALID_OFFSET: Final = _event(
    "global-invalid-offset", WORKER,
    "the global store's checkpoint is past the accounts topic's end",
    {"offset": "the offset", "action": "wipe or die"})
GLOBAL_WAIT: Final = _event(
    "global-wait", WORKER,
    "a record met a global store rebuild and went back to its queue (once per rebuild)",
    {**_TASK})

# -- processing -------------------------------------------------------------------------

TASK_RUNNING: Final = _event(
    "task-running", WORKER | KSTREAMS_APPS,
    "a task turned RUNNING (kstreams: the processor's init, which Kafka Streams runs "
    "when the task turns RUNNING); also when a suspended task resumes", {**_TASK})
TASK_FIRST_RECORD: Final = _event(
    "task-first-record", KSTREAMS_APPS,
    "the first record a running period wrote: from then on a checkpoint kept from "
    "restoration is stale", {**_TASK, "partition": "input partition",
                             "offset": "input offset"})
TASK_CLOSED: Final = _event("task-closed", KSTREAMS_APPS, "the processor's close",
                            {**_TASK})
DEDUP_SKIP: Final = _event(
    "dedup-skip", WORKER | KSTREAMS_APPS,
    "an input record already processed was skipped (found in the dedup store)", _DEDUP)
DEDUP_REEMIT: Final = _event(
    "dedup-reemit", WORKER | KSTREAMS_APPS,
    "at-least-once: a redelivery of a record already processed, found in the balance's "
    "kept outputs or at the position its dedup entry remembers; its output is sent "
    "again, identical", _DEDUP)
DEDUP_LOST: Final = _event(
    "dedup-lost", KSTREAMS_APPS,
    "at-least-once: a redelivery of a record already in its account's balance (the "
    "balance's offset is at or past it) whose dedup record a crash lost: not applied "
    "again; its output is rebuilt only when the balance is at this very record",
    {**_DEDUP, "balance_offset": "input offset of the last event in the balance"})

# -- commits ----------------------------------------------------------------------------

TXN_BEGIN: Final = _event("txn-begin", WORKER, "a stream thread began a transaction")
TXN_ABORT: Final = _event("txn-abort", WORKER, "a stream thread aborted its transaction")
TXN_COMMIT: Final = _event(
    "txn-commit", WORKER | KSTREAMS_APPS,
    "a stream thread committed (kstreams: its `commit-total` metric rose, polled every "
    "50 ms, under either guarantee; no offsets)",
    {"offsets": "{input partition: next offset} (worker)",
     "records": "records in the transaction (worker)", **_SOURCE,
     "commits": "how much the metric rose (kstreams)"})
COMMIT: Final = _event("commit", WORKER, "an at-least-once commit of the input offsets",
                       {"offsets": "{input partition: next offset}"})

# -- stores that keep their own changelog offsets (Kafka Streams 4.3 on, KIP-1035) --------

STORE_OFFSETS: Final = _event(
    "store-offsets", Emitter.KSTREAMS,
    "exactly-once, Kafka Streams 4.3 on: a store of a task that turned RUNNING (the "
    "processor's init, after restoration, before its first record), as the store reports "
    "itself through the public StateStore API: the changelog offset it keeps and what it "
    "holds (checker/checks/store_offsets.py)",
    {**_TASK, "store": "store name", "changelog": "its changelog partition, `<topic>-<p>`",
     "offset": "StateStore#committedOffset of that partition: the last changelog record "
               "the store reflects (-4: unknown), or null",
     "digest": "store digest (workloads.ledger.contract.store_digest)",
     "entries": "entries in the store"})

EVENTS: Final[Mapping[str, TraceEvent]] = MappingProxyType(_EVENTS)
NAMES: Final = frozenset(_EVENTS)

# Groups the readers share.
TXN_EVENTS: Final = (TXN_BEGIN, TXN_COMMIT, TXN_ABORT)
COMMIT_EVENTS: Final = (TXN_COMMIT, COMMIT)  # a commit under either guarantee


def emitted_by(emitter: Emitter) -> frozenset[str]:
    """The events `emitter` writes."""
    return frozenset(name for name, e in _EVENTS.items() if e.emitters & emitter)
