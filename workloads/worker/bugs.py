"""The bug switches: the one place that documents every mutant of the worker.

Each switch is off by default and turned on with `--bugs NAME[,NAME]`. The four seed
switches re-create the mechanism of their report in `shared/seeds/`; the others are
realistic mistakes a streams runtime (or an application on top of it) makes. The harness
may read `BUG_NAMES` from this file's text; it must not import the worker.

For each switch: where the code differs, the trigger that exposes it, and the anomaly the
checker should report (the names of `checker/checks`; docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass

KAFKA_7672 = "KAFKA-7672"
KAFKA_8187 = "KAFKA-8187"
KAFKA_20685 = "KAFKA-20685"
KIP_406 = "KIP-406"
OFFSETS_OUTSIDE_TXN = "offsets-outside-txn"
RESTORE_READ_UNCOMMITTED = "restore-read-uncommitted"
CHECKPOINT_WITHOUT_FLUSH = "checkpoint-without-flush"
DEDUP_NOT_LOGGED = "dedup-not-logged"
EOS_NO_CORRUPTION_WIPE = "eos-no-corruption-wipe"
GLOBAL_REBUILD_NONBLOCKING = "global-rebuild-nonblocking"
CHECKPOINT_DELETE_NO_FSYNC = "checkpoint-delete-no-fsync"
STORE_WAL_NO_SYNC = "store-wal-no-sync"

# Plain tuple on purpose: the harness reads the names without importing the worker.
BUG_NAMES = (
    "KAFKA-7672",
    "KAFKA-8187",
    "KAFKA-20685",
    "KIP-406",
    "offsets-outside-txn",
    "restore-read-uncommitted",
    "checkpoint-without-flush",
    "dedup-not-logged",
    "eos-no-corruption-wipe",
    "global-rebuild-nonblocking",
    "checkpoint-delete-no-fsync",
    "store-wal-no-sync",
)


@dataclass(frozen=True)
class Bug:
    name: str
    mechanism: str
    trigger: str
    symptom: str
    where: str


REGISTRY: dict[str, Bug] = {
    b.name: b
    for b in (
        Bug(
            KAFKA_7672,
            mechanism="The thread's changelog reader keeps the set of changelog partitions "
            "that completed restoration for its whole life; closing a task never removes its "
            "partitions. A task that comes back to the same thread without a checkpoint is "
            "initialised empty (or wiped) and, its partitions being 'completed', goes RUNNING "
            "without reading its changelog.",
            trigger="A task leaves a thread (rebalance), loses its checkpoint or directory "
            "while away (state-directory cleaner, or an EOS crash path), then is assigned to "
            "the same thread again. Faults: scale out then in; stop/start of another pod.",
            symptom="lost-history: balances of a whole partition restart from zero. Trace: "
            "task-init with checkpoint null then task-running with no restore-start.",
            where="restore.ChangelogReader.unregister",
        ),
        Bug(
            KAFKA_8187,
            mechanism="A standby task reads its checkpoint at creation, before taking the "
            "task-directory lock; when the lock is held by another thread of the same process "
            "it gives up without retrying and the thread goes RUNNING anyway (only active "
            "tasks are checked). The directory, now unlocked, is deleted by the cleaner. At "
            "the next reassignment the standby is closed and writes the offsets read at "
            "creation back, recreating the directory with a .checkpoint and no store data.",
            trigger="A standby moves between two threads of one process while the old owner "
            "is slow to release it (a delayed checkpoint write on close), the cleaner runs "
            "(delay elapsed), another rebalance happens, and later the active task fails "
            "over to this process. Faults: delay-checkpoint + scale, then kill the active.",
            symptom="lost-history: keys last written before the stale offset lose their "
            "history. Trace: lock-failed (standby), cleaner-delete, checkpoint-write by a "
            "standby that never ran task-init, then task-init with a checkpoint, entries 0.",
            where="task_standby.StandbyTask, thread_tasks.TaskManager.all_ready",
        ),
        Bug(
            KAFKA_20685,
            mechanism="Under exactly-once the checkpoint written when restoration completes "
            "is kept through RUNNING (the fix deletes it on the transition to RUNNING). "
            "RocksDB runs without WAL and background memtable flushes persist writes of "
            "transactions that later abort. After a SIGKILL the stale checkpoint is trusted: "
            "no corruption wipe, only the changelog tail is replayed (read_committed).",
            trigger="An exactly-once task that restored from a non-empty changelog runs, a "
            "memtable flush persists an open transaction's writes, the pod is SIGKILLed.",
            symptom="dedup-skip: the redelivered events hit the dedup entries of the aborted "
            "transaction and are skipped (zero outputs); balances over-count (wrong-balance). "
            "Trace/state: a .checkpoint present in a RUNNING EOS task dir (stale-checkpoint).",
            where="task_active.StreamTask.complete_restoration",
        ),
        Bug(
            KIP_406,
            mechanism="The behaviour before KIP-406: an invalid offset in the global thread "
            "(the global consumer has no reset policy) kills the process instead of wiping the "
            "global store and rebuilding it from earliest.",
            trigger="Records of the accounts topic deleted past a stopped pod's global "
            "checkpoint (truncate-global), then the pod starts.",
            symptom="unavailable: the pod dies (exit non-zero, trace global-invalid-offset "
            "action die) and keeps dying on every restart while input keeps arriving.",
            where="global_thread.GlobalStreamThread.on_invalid_offset",
        ),
        Bug(
            OFFSETS_OUTSIDE_TXN,
            mechanism="Exactly-once application that commits consumed offsets with the "
            "consumer (commitSync) after every polled batch instead of "
            "send_offsets_to_transaction; offsets become durable before the transaction "
            "that holds the batch's output commits.",
            trigger="A kill, pause (fencing) or any abort between the offset commit and "
            "commit_transaction: almost every kill while processing.",
            symptom="lost-event: inputs below the committed offset with no committed output "
            "and no dedup-skip in the trace.",
            where="thread.StreamThread._process and StreamThread._commit",
        ),
        Bug(
            RESTORE_READ_UNCOMMITTED,
            mechanism="The restore consumer (and standby replay) reads changelogs with "
            "isolation read_uncommitted, so records of aborted transactions are restored.",
            trigger="A transaction aborted after writing changelog records (kill, fencing), "
            "then a restore or a standby replay of that partition (failover, wipe).",
            symptom="dedup-skip (aborted event ids remembered) and wrong-balance "
            "(aborted amounts counted).",
            where="restore.ChangelogReader.__init__",
        ),
        Bug(
            CHECKPOINT_WITHOUT_FLUSH,
            mechanism="Checkpoints are written without flushing the stores first; with the "
            "WAL off, writes still in the memtable are not durable while the checkpoint "
            "already claims them (at-least-once commits, standby checkpoints).",
            trigger="At-least-once: SIGKILL soon after a commit, with the last writes still "
            "in the memtable.",
            symptom="lost-history: the restart trusts the checkpoint, restores only the tail "
            "and the store misses the writes between its last flush and the checkpoint.",
            where="state_manager.StateManager.checkpoint",
        ),
        Bug(
            DEDUP_NOT_LOGGED,
            mechanism="The dedup store is local only (logging disabled): nothing is written to "
            "its changelog, so restoration and standbys never rebuild it.",
            trigger="Any task migration or wipe (kill under EOS, move with an empty volume, "
            "scale) followed by a duplicate re-send of an earlier event id.",
            symptom="duplicate-output and wrong-balance: a re-sent event id is processed "
            "again after the task moved.",
            where="state_manager.logged_stores (used by tasks, standbys, restoration)",
        ),
        Bug(
            EOS_NO_CORRUPTION_WIPE,
            mechanism="Under exactly-once a task with no checkpoint but a non-empty store is "
            "not treated as corrupted: the store is kept and the whole changelog is replayed "
            "on top of it (the at-least-once rule applied to EOS).",
            trigger="SIGKILL of an EOS pod after a memtable flush persisted writes of an open "
            "transaction.",
            symptom="dedup-skip and wrong-balance: aborted dedup entries and balances survive "
            "the replay (keys the changelog never mentions are never overwritten).",
            where="state_manager.StateManager.initialize",
        ),
        Bug(
            GLOBAL_REBUILD_NONBLOCKING,
            mechanism="On an invalid global offset the global store is wiped and rebuilt from "
            "earliest, but stream threads keep processing during the rebuild (the "
            "'GlobalRestoring' state KIP-406 rejected is missing).",
            trigger="truncate-global while the pod runs or before it starts, with input "
            "arriving during the rebuild.",
            symptom="stale-global: outputs joined no value (or an old one) for accounts the "
            "global topic held.",
            where="global_thread.GlobalStreamThread.on_invalid_offset",
        ),
        Bug(
            CHECKPOINT_DELETE_NO_FSYNC,
            mechanism="A task's checkpoint is deleted (under EOS when the task turns RUNNING, "
            "the fix of KAFKA-20685; on resume; before a wipe) without fsyncing the task "
            "directory, as Kafka Streams' OffsetCheckpoint.delete does (Files.deleteIfExists). "
            "A SIGKILL cannot tell: the page cache keeps the unlink. A machine crash can undo "
            "it while the store's flushed SST files, fsynced by RocksDB, survive.",
            trigger="Power loss of an EOS pod whose task restored from a non-empty changelog "
            "and runs, after a memtable flush persisted writes of an open transaction.",
            symptom="dedup-skip and wrong-balance, as KAFKA-20685: the resurrected restore-time "
            "checkpoint is trusted over a store holding aborted writes.",
            where="state_manager.StateManager (checkpoint deletions)",
        ),
        Bug(
            STORE_WAL_NO_SYNC,
            mechanism="The stores keep RocksDB's write-ahead log, written but never synced "
            "(RocksDB's default WriteOptions), and checkpoints skip the memtable flush, trusting "
            "the log. A killed process loses nothing (the log is in the page cache); a machine "
            "crash loses the log's tail while the fsynced checkpoint claims it.",
            trigger="At-least-once: power loss soon after a commit (its checkpoint), with the "
            "last writes in the memtable and the log.",
            symptom="lost-history / wrong-balance: the restart trusts the checkpoint, restores "
            "only the tail, and the store misses the writes the lost log held.",
            where="store.KeyValueStore.open, state_manager.StateManager.checkpoint",
        ),
    )
}

assert tuple(REGISTRY) == BUG_NAMES


def parse_bugs(spec: str | None) -> frozenset[str]:
    """`--bugs` value -> set of switch names; unknown names are an error (exit 254)."""
    if not spec:
        return frozenset()
    names = frozenset(s.strip() for s in spec.split(",") if s.strip())
    unknown = names - set(BUG_NAMES)
    if unknown:
        raise ValueError(f"unknown bug switch(es): {', '.join(sorted(unknown))}")
    return names
