"""A stream thread's work on its running tasks (Kafka Streams' TaskExecutor): process
queued records, under exactly-once inside the thread's transaction, and commit them: the
transaction with the input offsets, or at-least-once a flush, an offset commit and the
tasks' checkpoints. Mixed into StreamThread, whose attributes it declares."""

from __future__ import annotations

import time
from collections.abc import Callable

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata

from workloads.worker import bugs, clients
from workloads.worker.collector import RecordCollector
from workloads.worker.config import WorkerConfig
from workloads.worker.global_thread import GlobalNotReady
from workloads.worker.task_active import StreamTask
from workloads.worker.thread_membership import Membership
from workloads.worker.thread_tasks import TaskManager
from workloads.worker.trace import Tracer

MAX_QUEUE = 2000  # records buffered per task before its partition is paused


class TaskExecutor:
    cfg: WorkerConfig
    tname: str
    tracer: Tracer
    tm: TaskManager
    consumer: KafkaConsumer
    producer: KafkaProducer
    collector: RecordCollector
    membership: Membership
    _in_txn: bool
    _last_commit: float
    _group_meta: ConsumerGroupMetadata | None
    # at-least-once revocation: checkpoints to write once the listener has committed
    _post_commit: Callable[[], None] | None

    def _process(self) -> None:
        for task in self.tm.running():
            for _ in range(500):
                if not task.queue:
                    break
                if not self.cfg.eos and self.membership.lapsed(self.consumer):
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
