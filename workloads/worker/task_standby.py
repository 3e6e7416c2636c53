"""A standby task: replays a task's changelogs into a local copy so a failover to this
process restores only a tail. It never processes input and checkpoints what it applied
(only committed changelog data, read_committed), at every commit interval and on close.

KAFKA-8187 lives here: with the switch, the checkpoint is read at creation before the
lock, the lock is tried once, and on close the creation-time offsets are written back even
though the task never held the lock (recreating a cleaned directory). Without it the lock
is retried (after a back-off, thread_tasks.py), the checkpoint is read after the lock is
taken, and a checkpoint is only written by a task that holds its lock.
"""

from __future__ import annotations

from kafka import TopicPartition

from workloads.ledger.contract import task_partition
from workloads.worker import bugs
from workloads.worker.checkpoint import Offsets, offsets_for_trace, read_checkpoint
from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.restore import ChangelogReader
from workloads.worker.state_manager import StateManager
from workloads.worker.statedir import StateDirectory
from workloads.worker.trace import Tracer


class StandbyTask:
    kind = "standby"

    def __init__(
        self,
        cfg: WorkerConfig,
        task: str,
        sdir: StateDirectory,
        tracer: Tracer,
        control: ControlFile,
        thread: str,
    ) -> None:
        self.cfg, self.task, self.sdir, self.tracer, self.thread = cfg, task, sdir, tracer, thread
        self.partition = task_partition(task)
        self.sm = StateManager(
            cfg, task, self.partition, sdir.task_dir(task, create=False), tracer, control,
            "standby",
        )
        self.sm.thread = thread
        self.initialized = False
        self.closed = False
        self.gave_up = False  # KAFKA-8187: lock failed once, never retried
        self.creation_offsets: Offsets | None = None
        if cfg.bug(bugs.KAFKA_8187):
            # The standby reads its checkpoint in its constructor, before any lock.
            try:
                self.creation_offsets = read_checkpoint(self.sm.checkpoint_path)
            except (ValueError, OSError):
                self.creation_offsets = None
            if self.creation_offsets is not None:
                self.tracer.emit(
                    thread, "checkpoint-read", task=task,
                    offsets=offsets_for_trace(self.creation_offsets), kind="standby-creation",
                )

    def changelog_tps(self) -> list[TopicPartition]:
        return [TopicPartition(*self.sm.tp(s)) for s in self.sm.logged]

    def try_initialize(self, reader: ChangelogReader) -> bool:
        if self.initialized or self.gave_up:
            return self.initialized
        if not self.sdir.lock(self.task, self.thread):  # the task manager traces it
            if self.cfg.bug(bugs.KAFKA_8187):
                self.gave_up = True
            return False
        self.sdir.task_dir(self.task)
        ckpt = self.sm.read_checkpoint()
        starts = self.sm.initialize(ckpt, delete_after_read=self.cfg.eos)
        for store in self.sm.logged:
            tp = TopicPartition(*self.sm.tp(store))
            reader.register(self.task, store, tp, starts[store],
                            self.sm.changelog_applier(store), active=False)
        self.initialized = True
        return True

    def maybe_checkpoint(self) -> None:
        if self.initialized:
            self.sm.checkpoint("standby-commit")

    def close(self, reader: ChangelogReader) -> None:
        if self.closed:
            return
        self.closed = True
        if self.initialized:
            reader.unregister(self.changelog_tps())
            self.sm.checkpoint("close")
            self.sm.close()
            self.sdir.unlock(self.task, self.thread)
        elif self.cfg.bug(bugs.KAFKA_8187) and self.creation_offsets is not None:
            # Writes back what it read at creation, without the lock; the directory may
            # have been deleted by the cleaner meanwhile and is recreated by the write.
            self.sm.checkpoint("close", offsets=self.creation_offsets)
