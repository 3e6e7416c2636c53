"""A stream thread: its own consumer (static member `<instance>-<thread>`), its own producer
(transactional under EOS, id stable per instance+thread so a restarted pod fences its
zombie), its changelog reader and its tasks. One loop iteration is Kafka Streams' runOnce:
poll, apply an assignment, initialise/restore tasks, process, maybe commit.

The clients and their bounded transactional calls are in `clients.py`, the rebalance
listener in `thread_listener.py`, the group membership in `thread_membership.py`, the tasks
in `thread_tasks.py`, processing and commits in `thread_executor.py`; the process watchdog
that ends a stalled thread is in `app.py`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import kafka.errors as Errors
from kafka import TopicPartition
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata

from workloads.ledger.contract import task_id
from workloads.worker import clients
from workloads.worker.assignor import StreamsAssignor, Subscription
from workloads.worker.collector import RecordCollector
from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.thread_executor import TaskExecutor
from workloads.worker.thread_listener import StreamThreadListener
from workloads.worker.thread_membership import Membership
from workloads.worker.thread_tasks import TaskManager
from workloads.worker.trace import Tracer

log = logging.getLogger(__name__)

# How long a poll may block: the main consumer's while no active task restores, the
# restore consumer's while one does (Kafka Streams' poll.ms, 100 ms by default).
POLL_MS = 50
RESTORE_POLL_MS = 20


class Fenced(RuntimeError):
    """Another live incarnation of this pod owns our ids: this process is the zombie."""


class StreamThread(TaskExecutor, threading.Thread):
    def __init__(
        self,
        cfg: WorkerConfig,
        index: int,
        sdir: StateDirectory,
        tracer: Tracer,
        control: ControlFile,
        global_version: Callable[[str], int | None],
        global_ready: Callable[[], bool],
        on_state: Callable[[], None],
    ) -> None:
        self.tname = f"StreamThread-{index}"
        super().__init__(name=self.tname, daemon=True)
        self.cfg, self.sdir, self.tracer, self.control = cfg, sdir, tracer, control
        self.global_version, self.global_ready = global_version, global_ready
        self.on_state = on_state
        self.state = "CREATED"
        self.stop_requested = threading.Event()
        self.error: BaseException | None = None
        self._pending: set[TopicPartition] | None = None
        self._lost = False
        self._in_txn = False
        self._last_commit = time.monotonic()
        self._revoking = False
        self._assigned_once = False  # RUNNING needs a first assignment, even an empty one
        self._group_meta: ConsumerGroupMetadata | None = None
        self.last_loop = time.monotonic()  # the client's watchdog reads it
        self.membership = Membership(cfg, self.tname)
        self._fatal: BaseException | None = None
        self._post_commit: Callable[[], None] | None = None

    # -- setup -----------------------------------------------------------------------

    def _setup(self) -> None:
        cfg = self.cfg
        self.reader = ChangelogReader(cfg, self.tracer, self.tname)
        self.tm = TaskManager(
            cfg, self.sdir, self.tracer, self.control, self.reader, self.global_version,
            self.tname,
        )
        self.assignor = StreamsAssignor(cfg.input_topic, cfg.standbys, self._describe)
        self.producer = clients.new_producer(cfg, self.tname)
        self.collector = RecordCollector(self.producer)
        self.consumer = clients.new_consumer(
            cfg, self.tname, self.assignor, StreamThreadListener(self)
        )

    def _describe(self) -> Subscription:
        return Subscription(
            self.cfg.instance_id, self.tname, tuple(sorted(self.tm.active)),
            tuple(sorted(self.tm.standby)), tuple(self.sdir.task_dirs()),
        )

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.on_state()

    # -- rebalance callbacks (consumer IO thread, stream thread blocked in poll) --------

    def prepare_revocation(self) -> dict[TopicPartition, OffsetAndMetadata]:
        """The listener commits the offsets this returns, then calls finish_revocation
        (or revocation_commit_failed)."""
        self._set_state("PARTITIONS_REVOKED")
        self._post_commit = None
        tasks = sorted(self.tm.active)
        if tasks:
            self.tracer.emit(self.tname, "revoked", tasks=tasks)
        if self._revoking:  # shutting down: already committed and closed
            return {}
        try:
            return self._commit(in_listener=True)
        except Errors.KafkaError as e:
            self.revocation_commit_failed(e)
            return {}

    def revocation_commit_failed(self, error: Exception) -> None:
        """The commit on revocation failed (the group moved on: a stale generation, an
        unknown member): Kafka Streams' TaskMigratedException from the listener. No
        checkpoint, the tasks close dirty; the thread is rejoining already."""
        self._post_commit = None
        self._migrated(error, "commit on revocation failed")

    def finish_revocation(self) -> None:
        """After the listener's commit succeeded: at-least-once's post-commit (checkpoint),
        then suspend."""
        post, self._post_commit = self._post_commit, None
        if post is not None:
            post()
        self.tm.suspend_all()

    def on_assigned(self, assigned: set[TopicPartition]) -> None:
        self.membership.joined()
        self._pending = set(assigned)
        if assigned:
            self.consumer.pause(*assigned)  # resumed per task once it is RUNNING
        self._set_state("PARTITIONS_ASSIGNED")

    def on_lost(self) -> None:
        self._lost = True

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._setup()
            self._set_state("STARTING")
            while not self.stop_requested.is_set():
                self._run_once()
            self._shutdown()
        except BaseException as e:  # surfaces as the client's ERROR state
            self.error = e
            log.exception("%s died", self.tname)
            self.tracer.emit(self.tname, "fatal", error=f"{type(e).__name__}: {e}")
        finally:
            self._set_state("DEAD")

    def _run_once(self) -> None:
        if self._fatal is not None:
            raise Fenced(f"fenced by a newer incarnation of this pod: {self._fatal}")
        if self.membership.heartbeat_fenced(self.consumer):
            raise Fenced("fenced by a newer incarnation of this pod: heartbeat stopped")
        # Kafka Streams' pollPhase and StoreChangelogReader: the main poll returns at once
        # only while an active task restores, and the restore poll then blocks; otherwise
        # the main poll blocks and the standbys' changelogs are read after it, at once.
        # Both returned at once whenever a standby ran or an active waited for its lock:
        # the loop spun, and tried two standby locks 613,000 times in 2 min (issue 53).
        restoring = self.reader.restoring()
        joining = not self._group_healthy()
        self.last_loop = time.monotonic()
        # The listener runs on the consumer's IO thread: it uses this snapshot (taken by the
        # stream thread, the generation being revoked) instead of calling into the consumer.
        self._group_meta = self.consumer.group_metadata()
        batches = {}
        if not joining or self.membership.join(self.consumer):
            batches = self.consumer.poll(timeout_ms=0 if restoring else POLL_MS)
        if self._lost:
            self._lost = False
            self._close_dirty()
        rewound: set[TopicPartition] = set()
        if self._pending is not None:
            rewound = self._apply_assignment()
        for tp, records in batches.items():
            if tp in rewound:  # fetched from the position before the rebalance
                continue
            task = self.tm.active.get(task_id(tp.partition))
            if task is not None and task.state != "SUSPENDED":
                task.queue.extend(records)
        self.tm.try_initialize()
        if self.reader.has_work():
            restoring = self.reader.restoring()
            done, invalid = self.reader.poll(timeout_ms=RESTORE_POLL_MS if restoring else 0)
            if invalid:
                self.tm.on_invalid(invalid)
            assigned = self.consumer.assignment()
            for task in self.tm.on_restored(done):
                # A consumer that lost its member id (a partition past the session) has
                # dropped its assignment before the listener closes the task: nothing to
                # resume (kafka-python raises for an unassigned partition).
                if task.input_tp in assigned:
                    self.consumer.resume(task.input_tp)
        try:
            if self.global_ready():
                self._process()
            if (time.monotonic() - self._last_commit) * 1000 >= self.cfg.commit_interval_ms:
                self._commit()
                self.tm.checkpoint_standbys()
        except Errors.KafkaError as e:
            fenced = clients.fencing_error(e)
            if fenced is None:
                self._task_migrated(e)
            # A ProducerFenced (the transaction coordinator moved, an epoch was bumped) is
            # Kafka Streams' TaskMigrated, unless a newer process owns this instance id.
            elif (isinstance(fenced, Errors.FencedInstanceIdError)
                  or self.membership.zombie(self.consumer)):
                raise Fenced(f"fenced by a newer incarnation of this pod: {fenced}") from e
            else:
                self._task_migrated(fenced, renew_producer=True)
        if (
            self._assigned_once and self._pending is None and self.state != "RUNNING"
            and self.tm.all_ready()
        ):
            self._set_state("RUNNING")

    def _group_healthy(self) -> bool:
        healthy, replace = self.membership.healthy(self.consumer, self._group_meta)
        if replace is not None:
            self._replace_consumer(replace)
        return healthy

    def _replace_consumer(self, reason: str) -> None:
        log.warning("%s: %s; new consumer", self.tname, reason)
        self.tracer.emit(self.tname, "consumer-replaced", reason=reason)
        self._close_dirty()
        self.consumer.close(autocommit=False)
        self._pending, self._assigned_once = None, False
        self.membership.reset()
        self.consumer = clients.new_consumer(
            self.cfg, self.tname, self.assignor, StreamThreadListener(self)
        )
        self._set_state("STARTING")

    def _apply_assignment(self) -> set[TopicPartition]:
        """Returns the input partitions, all read again from their committed offsets.
        Only those the consumer still owns: a second rejoin in the same loop (the member
        found lost) may have dropped the listener's assignment already."""
        owned = set(self.consumer.assignment())
        assigned, self._pending = (self._pending or set()) & owned, None
        self._assigned_once = True
        active = {task_id(tp.partition) for tp in assigned}
        standby = set(self.assignor.standby_tasks) - active
        self.tracer.emit(self.tname, "assigned", active=sorted(active), standby=sorted(standby))
        self.tm.handle_assignment(active, standby)
        # Every one, not only the resumed tasks': a task closed at the revocation while it
        # restored, and created again now, has a partition whose position was kept too.
        self._rewind(assigned)
        return assigned

    def _rewind(self, tps: set[TopicPartition]) -> None:
        """Position the partitions at their committed offsets. kafka-python keeps a
        partition's position and fetched records across an eager rebalance that assigns
        it again (Java's consumer clears the assignment on revocation), and another member
        may have moved the committed offset meanwhile. Never a partition the consumer no
        longer owns (kafka-python raises `ValueError: Unassigned partition`)."""
        owned = self.consumer.assignment()
        for tp in tps:
            if tp not in owned:
                continue
            committed = self.consumer.committed(tp)
            if committed is None:
                self.consumer.seek_to_beginning(tp)
            else:
                self.consumer.seek(tp, committed)

    def _task_migrated(self, error: Exception, renew_producer: bool = False) -> None:
        """A commit failed (fenced generation or producer, timeout, abortable error): Kafka
        Streams' TaskMigratedException, which StreamThread.handleTaskMigrated handles by
        closing every task dirty and rejoining the group (unsubscribe, subscribe). The
        tasks come back only with the rejoin's assignment, read again from the committed
        offsets (_apply_assignment; EOS: wiped and restored, no checkpoint).

        This recreated the tasks of the assignment held when the commit failed, without a
        rejoin: after a pause past the session (CommitFailedError, unknown member) the next
        poll rejoined and dropped those partitions (on_partitions_lost), and the thread
        died seeking one of them (`ValueError: Unassigned partition`); under EOS it
        restored and ran, fenced, a task the group had given to another member."""
        self._migrated(error, "commit failed", renew_producer)
        assigned = set(self.consumer.assignment())
        if assigned:
            self.consumer.pause(*assigned)  # owned until the rejoin; nothing reads them
        if self._fatal is None:  # a zombie dies on the next loop instead
            # kafka-python keeps a re-assigned partition's position (Java's unsubscribe
            # drops it): the rejoin's assignment is rewound like any other.
            self.consumer._coordinator.request_rejoin()  # type: ignore[attr-defined]

    def _migrated(self, error: Exception, what: str, renew_producer: bool = False) -> None:
        """Kafka Streams' handleLostAll: every task closed dirty (no commit, no checkpoint;
        EOS: the transaction aborted). RUNNING waits for the next assignment."""
        log.warning("%s: %s (%s: %s); tasks closed dirty, rejoining", self.tname, what,
                    type(error).__name__, error)
        self.tracer.emit(self.tname, "task-migrated", error=type(error).__name__)
        self._close_dirty(renew_producer)
        self._pending, self._assigned_once = None, False

    def _close_dirty(self, renew_producer: bool = False) -> None:
        """Task migrated / fenced / lost: abort, close without checkpoints. A producer that
        cannot abort (fenced, timed out) is replaced: the new one, same transactional id,
        aborts the open transaction when it initialises."""
        if self._in_txn and not renew_producer:
            try:
                clients.abort_transaction(self.producer)
                self.tracer.emit(self.tname, "txn-abort")
            except Errors.KafkaError as e:
                fenced = clients.fencing_error(e)
                if fenced is not None and (
                    isinstance(fenced, Errors.FencedInstanceIdError)
                    or self.membership.zombie(self.consumer)
                ):
                    self._fatal = fenced  # never fence the live incarnation back: die instead
                else:
                    renew_producer = True
        if renew_producer and self.cfg.eos and self._fatal is None:
            clients.close_at_once(self.producer)
            self.producer = clients.new_producer(self.cfg, self.tname)
            self.collector = RecordCollector(self.producer)
        self._in_txn = False
        self.collector.discard()
        self.tm.close_all(clean=False)

    def _shutdown(self) -> None:
        """Clean close: commit, suspend (checkpoint) and close every task."""
        self._set_state("PENDING_SHUTDOWN")
        self._revoking = True
        try:
            self._commit()
            self.tm.suspend_all()
            self.tm.close_all(clean=True)
        except Errors.KafkaError as e:
            log.warning("%s: commit at shutdown failed (%s); closing dirty", self.tname, e)
            self._close_dirty()
        self.consumer.close(autocommit=False)
        self.producer.close(timeout=10)
        self.reader.close()
