"""A stream thread: its own consumer (static member `<instance>-<thread>`), its own producer
(transactional under EOS, id stable per instance+thread so a restarted pod fences its
zombie), its changelog reader and its tasks. One loop iteration is Kafka Streams' runOnce:
poll, apply an assignment, initialise/restore tasks, process, maybe commit.

The clients and their bounded transactional calls are in `clients.py`, the rebalance
listener in `thread_listener.py`, the tasks in `thread_tasks.py`; the process watchdog that
ends a stalled thread is in `app.py`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import kafka.errors as Errors
from kafka import TopicPartition
from kafka.structs import ConsumerGroupMetadata, MemberState, OffsetAndMetadata

from workloads.ledger.contract import task_id
from workloads.worker import bugs, clients
from workloads.worker.assignor import StreamsAssignor, Subscription
from workloads.worker.collector import RecordCollector
from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.global_thread import GlobalNotReady
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.task_active import StreamTask
from workloads.worker.thread_listener import StreamThreadListener
from workloads.worker.thread_tasks import TaskManager
from workloads.worker.trace import Tracer

log = logging.getLogger(__name__)

MAX_QUEUE = 2000  # records buffered per task before its partition is paused
# A consumer whose coordinator stays unknown this long is replaced (kafka-python 3.0.12
# does not always find a coordinator again after a broker crash).
NO_COORDINATOR_S = 15.0
JOIN_TIMEOUT_MS = 2000


class Fenced(RuntimeError):
    """Another live incarnation of this pod owns our ids: this process is the zombie."""


class StreamThread(threading.Thread):
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
        self._unhealthy_since: float | None = None
        self._no_coordinator_since: float | None = None
        self._last_zombie_check = 0.0
        self._fatal: BaseException | None = None
        self._joined_at = float("-inf")  # when the listener last got an assignment
        self._lapsed = False  # at-least-once: processing held, membership maybe gone
        # at-least-once revocation: checkpoints to write once the listener has committed
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
        self._joined_at = time.monotonic()
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
        if self._heartbeat_fenced():
            raise Fenced("fenced by a newer incarnation of this pod: heartbeat stopped")
        busy = self.tm.restoring() or self.reader.has_work()
        joining = not self._group_healthy()
        self.last_loop = time.monotonic()
        # The listener runs on the consumer's IO thread: it uses this snapshot (taken by the
        # stream thread, the generation being revoked) instead of calling into the consumer.
        self._group_meta = self.consumer.group_metadata()
        batches = {}
        if not joining or self._join():
            batches = self.consumer.poll(timeout_ms=0 if busy else 50)
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
            done, invalid = self.reader.poll(timeout_ms=20 if self.tm.restoring() else 0)
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
            elif isinstance(fenced, Errors.FencedInstanceIdError) or self._zombie():
                raise Fenced(f"fenced by a newer incarnation of this pod: {fenced}") from e
            else:
                self._task_migrated(fenced, renew_producer=True)
        if (
            self._assigned_once and self._pending is None and self.state != "RUNNING"
            and self.tm.all_ready()
        ):
            self._set_state("RUNNING")

    def _join(self) -> bool:
        """The group side of a poll, for up to JOIN_TIMEOUT_MS; true once the member is in
        the group (the listener has run). kafka-python 3.0.12 can lose a join, or a
        coordinator lookup, that completes between two short polls, so the exchange must
        finish inside one call; a whole poll() of that length would then run on to its
        timeout, as the partitions just assigned stay paused until their tasks are ready
        (1.7 s of a pod's start, measured from its trace and the broker's log)."""
        coordinator = self.consumer._coordinator  # type: ignore[attr-defined]
        return bool(coordinator.poll(timeout_ms=JOIN_TIMEOUT_MS))

    def _group_healthy(self) -> bool:
        """Stable member with a known coordinator. A consumer that has not found its
        coordinator for NO_COORDINATOR_S (broker crash), or is unstable for longer than a
        few session timeouts (a client hang), is replaced: tasks close dirty, it rejoins."""
        meta = self._group_meta
        coordinator_known = not self.consumer._coordinator.coordinator_unknown()  # type: ignore[attr-defined]
        healthy = meta is not None and meta.state == MemberState.STABLE and coordinator_known
        now = time.monotonic()
        if healthy:
            self._unhealthy_since = self._no_coordinator_since = None
            return True
        self._unhealthy_since = self._unhealthy_since or now
        self._no_coordinator_since = (
            None if coordinator_known else self._no_coordinator_since or now
        )
        limit = max(30.0, 3 * self.cfg.session_timeout_ms / 1000)
        if now - self._unhealthy_since > limit:
            self._replace_consumer(f"not a stable group member for {limit:.0f} s")
        elif (self._no_coordinator_since is not None
              and now - self._no_coordinator_since > NO_COORDINATOR_S):
            self._replace_consumer(f"no group coordinator for {NO_COORDINATOR_S:.0f} s")
        return False

    def _replace_consumer(self, reason: str) -> None:
        log.warning("%s: %s; new consumer", self.tname, reason)
        self.tracer.emit(self.tname, "consumer-replaced", reason=reason)
        self._close_dirty()
        self.consumer.close(autocommit=False)
        self._pending, self._assigned_once = None, False
        self._unhealthy_since = self._no_coordinator_since = None
        self.consumer = clients.new_consumer(
            self.cfg, self.tname, self.assignor, StreamThreadListener(self)
        )
        self._set_state("STARTING")

    def _heartbeat_fenced(self) -> bool:
        """kafka-python's heartbeat thread swallows FencedInstanceId (it only stops
        heartbeating): a stable member that no longer heartbeats asks the group, at most
        every few seconds, whether a newer process holds its instance id.

        Stable now, not in the loop's snapshot (`_group_meta`): a heartbeat answered
        "unknown member" (the group dropped a member paused past its session) resets the
        generation and stops the heartbeats too, and the member's own rejoin, its member
        id not known yet, then looked like a newer process holding its instance id: the
        thread died "fenced" instead of rejoining. A fenced member stays stable in
        kafka-python (FencedInstanceId only stops the heartbeats)."""
        coordinator = self.consumer._coordinator  # type: ignore[attr-defined]
        generation = coordinator.generation_if_stable()
        if generation is None or getattr(coordinator, "_heartbeat_enabled", True):
            return False
        now = time.monotonic()
        if now - self._last_zombie_check < 5.0:
            return False
        self._last_zombie_check = now
        return clients.newer_incarnation(
            self.cfg, f"{self.cfg.instance_id}-{self.tname}", generation.member_id
        )

    def _zombie(self) -> bool:
        """Does a newer process hold this thread's static instance id?"""
        coordinator = self.consumer._coordinator  # type: ignore[attr-defined]
        generation = getattr(coordinator, "_generation", None)
        member_id = getattr(generation, "member_id", None)
        return clients.newer_incarnation(
            self.cfg, f"{self.cfg.instance_id}-{self.tname}", member_id
        )

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

    def _membership_lapsed(self) -> bool:
        """At-least-once: may the group have dropped this member? Nothing fences it without
        transactions: a member paused or cut off past its session runs on with the records
        it had fetched until a heartbeat or a commit tells it, and would write, against
        its old stores, after the member that took its tasks over (issue 33: 200 ms of
        it put stale balances on a changelog). It processes only while a heartbeat, or
        its join, succeeded within half the session timeout; the broker counts the
        session from the same heartbeats, received no later than their responses."""
        heartbeat = self.consumer._coordinator.heartbeat  # type: ignore[attr-defined]
        last = max(heartbeat.last_receive, self._joined_at)
        lapsed = time.monotonic() - last >= self.cfg.session_timeout_ms / 2000
        if lapsed != self._lapsed:
            self._lapsed = lapsed
            if lapsed:
                log.warning("%s: no heartbeat for %.1f s: processing held until the group "
                            "answers", self.tname, time.monotonic() - last)
            else:
                log.info("%s: heartbeats answered again: processing resumed", self.tname)
        return lapsed

    def _process(self) -> None:
        for task in self.tm.running():
            for _ in range(500):
                if not task.queue:
                    break
                if not self.cfg.eos and self._membership_lapsed():
                    return  # the records stay queued; the next poll rejoins if need be
                if self.cfg.eos and not self._in_txn:
                    self.producer.begin_transaction()
                    self._in_txn = True
                    self.tracer.emit(self.tname, "txn-begin")
                try:
                    task.process_one(self.collector)
                except GlobalNotReady:  # the global store is rebuilt: the record waits
                    # Once per rebuild: `global_ready` keeps _process from running again.
                    self.tracer.emit(self.tname, "global-wait", task=task.task)
                    return
            for store in task.memtable_switches():
                self.tracer.emit(self.tname, "memtable-flush", task=task.task, store=store,
                                 in_txn=self._in_txn)
            paused = task.input_tp in self.consumer.paused()
            if len(task.queue) > MAX_QUEUE and not paused:
                self.consumer.pause(task.input_tp)
            elif len(task.queue) < MAX_QUEUE // 4 and paused:
                self.consumer.resume(task.input_tp)
        if self.cfg.eos and self.cfg.bug(bugs.OFFSETS_OUTSIDE_TXN):
            offsets = self._offsets(self.tm.running())
            if offsets:
                self.consumer.commit(offsets)
                self.tracer.emit(self.tname, "commit", offsets=self._trace_offsets(offsets))

    # -- commits -----------------------------------------------------------------------

    @staticmethod
    def _offsets(tasks: list[StreamTask]) -> dict[TopicPartition, OffsetAndMetadata]:
        return {
            t.input_tp: OffsetAndMetadata(t.next_offset, "", -1)
            for t in tasks
            if t.next_offset is not None
        }

    @staticmethod
    def _trace_offsets(offsets: dict[TopicPartition, OffsetAndMetadata]) -> dict[str, int]:
        return {
            str(tp.partition): om.offset
            for tp, om in sorted(offsets.items())
            if om.offset is not None  # never None: _offsets builds them from next offsets
        }

    def _commit(self, in_listener: bool = False) -> dict[TopicPartition, OffsetAndMetadata]:
        """Commit all tasks of the thread. Returns offsets the caller still has to commit
        through the consumer (at-least-once inside the rebalance listener)."""
        self._last_commit = time.monotonic()
        tasks = [t for t in self.tm.active.values() if t.uncommitted]
        offsets = self._offsets(tasks)
        if self.cfg.eos:
            if not self._in_txn:
                return {}
            if offsets and not self.cfg.bug(bugs.OFFSETS_OUTSIDE_TXN):
                meta = self._group_meta if in_listener else self.consumer.group_metadata()
                if meta is None:
                    raise RuntimeError("no group metadata: the consumer has not joined")
                clients.send_offsets_to_transaction(self.producer, offsets, meta)
            records = self.collector.count
            clients.commit_transaction(self.producer)
            self._in_txn = False
            changelog = self.collector.take_offsets()
            self.tracer.emit(
                self.tname, "txn-commit", offsets=self._trace_offsets(offsets), records=records
            )
            for t in tasks:
                t.committed(changelog)
            return {}
        self.producer.flush()
        changelog = self.collector.take_offsets()

        def post_commit() -> None:
            if offsets:
                self.tracer.emit(self.tname, "commit", offsets=self._trace_offsets(offsets))
            for t in tasks:
                t.committed(changelog)
                t.sm.checkpoint("commit")  # at-least-once: after the commit, stores flushed first

        if in_listener:
            # The listener awaits the offset commit, then finish_revocation runs post_commit:
            # a checkpoint only for offsets committed (Kafka Streams' postCommit). Written
            # before the commit, a commit that failed left it claiming changelog records of
            # input not committed, and the listener's error killed the thread.
            self._post_commit = post_commit
            return offsets
        if offsets:
            self.consumer.commit(offsets)
        post_commit()
        return {}

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
                    isinstance(fenced, Errors.FencedInstanceIdError) or self._zombie()
                ):
                    self._fatal = fenced  # never fence the live incarnation back: die instead
                else:
                    renew_producer = True
        if renew_producer and self.cfg.eos and self._fatal is None:
            self.producer.close(timeout=5)
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
