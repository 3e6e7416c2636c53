"""An active task: owns one input partition, its stores and their changelog partitions.

Life cycle (Kafka Streams' StreamTask): CREATED -> (lock) RESTORING -> RUNNING ->
SUSPENDED (revoked; checkpointed) -> RESTORING (re-assigned to the same thread) or CLOSED.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from kafka import TopicPartition
from kafka.consumer.fetcher import ConsumerRecord

from workloads.ledger import processor
from workloads.ledger.contract import BALANCE_STORE, Event, task_partition
from workloads.worker import bugs
from workloads.worker.collector import RecordCollector
from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.global_thread import GlobalNotReady
from workloads.worker.restore import ChangelogReader
from workloads.worker.state_manager import StateManager
from workloads.worker.statedir import StateDirectory
from workloads.worker.trace import Tracer

CREATED, RESTORING, RUNNING, SUSPENDED, CLOSED = (
    "CREATED", "RESTORING", "RUNNING", "SUSPENDED", "CLOSED"
)


class StreamTask:
    kind = "active"

    def __init__(
        self,
        cfg: WorkerConfig,
        task: str,
        sdir: StateDirectory,
        tracer: Tracer,
        control: ControlFile,
        global_version: Callable[[str], int | None],
        thread: str,
    ) -> None:
        self.cfg, self.task, self.sdir, self.tracer, self.thread = cfg, task, sdir, tracer, thread
        self.partition = task_partition(task)
        self.input_tp = TopicPartition(cfg.input_topic, self.partition)
        self.global_version = global_version
        self.sm = StateManager(
            cfg, task, self.partition, sdir.task_dir(task, create=False), tracer, control, "active"
        )
        self.sm.thread = thread
        self.state = CREATED
        self.queue: deque[ConsumerRecord] = deque()
        self.next_offset: int | None = None  # input position after the last processed record
        self.committed_input: int | None = None  # input offset committed last (None: not yet read)
        self.uncommitted = False
        self.write_back = False  # at-least-once: balances to send again before processing

    def changelog_tps(self) -> list[TopicPartition]:
        return [TopicPartition(*self.sm.tp(s)) for s in self.sm.logged]

    # -- initialisation and restoration ----------------------------------------------

    def try_initialize(self, reader: ChangelogReader) -> bool:
        if not self.sdir.lock(self.task, self.thread):
            return False  # another thread still closes it; retried after a back-off
        self.sdir.task_dir(self.task)
        ckpt = self.sm.read_checkpoint()
        self._restore_from(reader, self.sm.initialize(ckpt, delete_after_read=self.cfg.eos))
        return True

    def _restore_from(self, reader: ChangelogReader, starts: dict[str, int]) -> None:
        for store in self.sm.logged:
            tp = TopicPartition(*self.sm.tp(store))
            reader.register(
                self.task, store, tp, starts[store], self.sm.changelog_applier(store), active=True
            )
        self.state = RESTORING

    def restart_restoration(self, reader: ChangelogReader) -> None:
        """The changelog offset to resume from is gone (truncated): wipe, restore again."""
        self.sm.wipe("invalid changelog offset during restoration")
        for tp in self.changelog_tps():
            reader.restart(tp, 0)

    def complete_restoration(self, reader: ChangelogReader) -> None:
        for store in self.sm.logged:
            pos = reader.position(TopicPartition(*self.sm.tp(store)))
            if pos > 0:
                self.sm.offsets[store] = max(self.sm.offsets[store] or -1, pos - 1)
        # The state updater checkpoints every task whose restoration completes, with no
        # EOS condition (DefaultStateUpdater.maybeCompleteRestoration).
        self.sm.checkpoint("restored")
        # At-least-once: the restored balances go to the changelog again before the first
        # record is processed (process_one).
        self.write_back = not self.cfg.eos and BALANCE_STORE in self.sm.logged
        if self.cfg.eos and not self.cfg.bug(bugs.KAFKA_20685):
            # Fix of KAFKA-20685: no checkpoint may exist while an EOS task is RUNNING.
            self.sm.delete_checkpoint("eos-running")
        self.state = RUNNING
        self.tracer.emit(self.thread, "task-running", task=self.task)

    # -- processing ------------------------------------------------------------------

    def memtable_switches(self) -> list[str]:
        """The stores whose memtable filled up and started a background flush since the
        last call (traced as `memtable-flush`: the evidence of persisted writes)."""
        return [name for name, kv in self.sm.stores.items()
                if kv.is_open and kv.memtable_switched()]

    def _get(self, store: str, key: str) -> str | None:
        return self.sm.stores[store].get(key)

    def process_one(self, collector: RecordCollector) -> bool:
        """Process the next queued record; False when the queue is empty."""
        if not self.queue:
            return False
        if self.write_back:
            self._write_back_balances(collector)
        r = self.queue.popleft()
        event = Event.decode(r.value)
        if self.committed_input is None:
            self.committed_input = r.offset  # read from the committed offset (thread._rewind)
        try:
            result = processor.process(
                event, self.partition, r.offset, self._get, self.global_version,
                # Without a transaction any of the dedup record, the balance record and the
                # output may have outlived the others: a redelivery must not count twice.
                at_least_once=not self.cfg.eos,
                committed_offset=self.committed_input,
            )
        except GlobalNotReady:
            self.queue.appendleft(r)  # nothing written yet: processed after the rebuild
            raise
        if result.reemitted:
            self.tracer.emit(
                self.thread, "dedup-reemit", task=self.task, event_id=event.event_id,
                partition=self.partition, offset=r.offset,
            )
        if result.output is None:
            self.tracer.emit(
                self.thread, "dedup-skip", task=self.task, event_id=event.event_id,
                partition=self.partition, offset=r.offset,
            )
        else:
            for w in result.writes:
                self.sm.stores[w.store].put(w.key, w.value)
                if w.store in self.sm.logged:
                    collector.send(self.cfg.changelog(w.store), w.key, w.value, self.partition)
            out = result.output
            collector.send(self.cfg.output_topic, out.account, out.encode(), None)
        self.next_offset = r.offset + 1
        self.uncommitted = True
        return True

    def _write_back_balances(self, collector: RecordCollector) -> None:
        """At-least-once: send every balance the store holds to the changelog again, once
        after each restoration, before any record is processed (so before any commit can
        move the input offset on). The restoration keeps a balance over an older record
        of its changelog (StateManager.changelog_applier), and the store may hold a
        balance the changelog never got: flushed by RocksDB before a SIGKILL whose
        producer still held its record. A redelivery of an event already in a balance
        only re-emits its output, so without this the changelog would lag the store
        until the account's next event, and a restore elsewhere meanwhile, past the
        commit, would lose the events in between. A handful of records (one per account
        of the partition); they also supersede the older records on the changelog."""
        self.write_back = False
        topic = self.cfg.changelog(BALANCE_STORE)
        for account, value in self.sm.stores[BALANCE_STORE].items():
            collector.send(topic, account, value, self.partition)
        self.uncommitted = True

    def committed(self, changelog_offsets: dict[tuple[str, int], int]) -> None:
        """After a successful commit: remember where our changelog records landed."""
        for store in self.sm.logged:
            off = changelog_offsets.get(self.sm.tp(store))
            if off is not None:
                self.sm.offsets[store] = off
        self.committed_input = self.next_offset
        self.uncommitted = False

    # -- suspend / resume / close ------------------------------------------------------

    def suspend(self) -> None:
        """Revoked: the thread has committed; checkpoint (also under EOS: the store now
        matches committed data) and keep the task in case it comes back."""
        if self.state in (RUNNING, RESTORING):
            self.sm.checkpoint("suspend")
        self.queue.clear()
        self.next_offset = self.committed_input = None
        if self.state == RUNNING:
            self.state = SUSPENDED

    def resume(self, reader: ChangelogReader) -> None:
        """Assigned again after a suspend. The task may have run elsewhere meanwhile: a
        member paused past its session is told "revoked", not "lost", by kafka-python
        when it comes back, and can get the task back from the member that took it over.
        As Kafka Streams' resume (SUSPENDED -> RESTORING), restore what the changelogs
        gained since the store's offsets, then run (task-running, as after any restore).
        Resuming straight to RUNNING ran a stale store: a fixed-worker run re-processed
        250 events another pod had committed (duplicate-output 241)."""
        if self.cfg.eos:
            # KAFKA-10362: the suspend checkpoint is not valid once the task writes again.
            self.sm.delete_checkpoint("resume")
        reader.unregister(self.changelog_tps())
        self._restore_from(reader, {store: 0 if off is None else off + 1
                                    for store, off in self.sm.offsets.items()
                                    if store in self.sm.logged})

    def close(self, reader: ChangelogReader, clean: bool) -> None:
        if self.state == CLOSED:
            return
        reader.unregister(self.changelog_tps())
        if self.state != CREATED:
            if clean and self.state in (RUNNING, RESTORING):
                self.sm.checkpoint("close")
            self.sm.close()
            self.sdir.unlock(self.task, self.thread)
        self.state = CLOSED
