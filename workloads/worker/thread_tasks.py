"""The tasks of one stream thread (Kafka Streams' TaskManager): applies assignments,
retries task initialisation (a task whose directory lock another thread holds waits out
its back-off, lock_backoff.py), routes restored/invalid changelog partitions to their
task, and suspends or closes tasks on revocation and shutdown."""

from __future__ import annotations

from collections.abc import Callable

from kafka import TopicPartition

from workloads.worker import bugs
from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.lock_backoff import LockBackoff
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.task_active import CREATED, RESTORING, RUNNING, SUSPENDED, StreamTask
from workloads.worker.task_standby import StandbyTask
from workloads.worker.trace import Tracer


class TaskManager:
    def __init__(
        self,
        cfg: WorkerConfig,
        sdir: StateDirectory,
        tracer: Tracer,
        control: ControlFile,
        reader: ChangelogReader,
        global_version: Callable[[str], int | None],
        thread: str,
    ) -> None:
        self.cfg, self.sdir, self.tracer, self.control = cfg, sdir, tracer, control
        self.reader, self.global_version, self.thread = reader, global_version, thread
        self.active: dict[str, StreamTask] = {}
        self.standby: dict[str, StandbyTask] = {}
        self.backoff = LockBackoff()

    # -- assignment ------------------------------------------------------------------

    def handle_assignment(self, active: set[str], standby: set[str]) -> None:
        """Close what left, resume what came back (restoring again), create what is new."""
        for t in sorted(set(self.active) - active):
            self.active.pop(t).close(self.reader, clean=True)
        for t in sorted(set(self.standby) - standby):
            self.standby.pop(t).close(self.reader)
        for t in sorted(active):
            task = self.active.get(t)
            if task is not None and task.state == SUSPENDED:
                task.resume(self.reader)
            elif task is None:
                if t in self.standby:  # promoted in the same thread: hand the state over
                    self.standby.pop(t).close(self.reader)
                self.active[t] = StreamTask(
                    self.cfg, t, self.sdir, self.tracer, self.control, self.global_version,
                    self.thread,
                )
        for t in sorted(standby - set(self.standby)):
            sb = StandbyTask(self.cfg, t, self.sdir, self.tracer, self.control, self.thread)
            self.standby[t] = sb
            if self.cfg.bug(bugs.KAFKA_8187):
                self._initialize(sb)  # the one and only attempt
        self._end_streaks()

    def try_initialize(self) -> None:
        for task in self.active.values():
            if task.state == CREATED:
                self._initialize(task)
        if not self.cfg.bug(bugs.KAFKA_8187):
            for sb in self.standby.values():
                if not sb.initialized:
                    self._initialize(sb)

    def _initialize(self, task: StreamTask | StandbyTask) -> None:
        """One try at the task's lock, and its initialisation once taken, unless its
        back-off runs (Kafka Streams' addTaskToStateUpdater). Each failed try is traced
        with the failures in a row so far."""
        if not self.backoff.may_try(task.task):
            return
        if task.try_initialize(self.reader):
            self.backoff.end(task.task)
            return
        attempt = self.backoff.failed(task.task)
        self.tracer.emit(self.thread, "lock-failed", task=task.task, kind=task.kind,
                         attempt=attempt)

    def _end_streaks(self) -> None:
        """The back-off of a task that left the thread ends: assigned again, it tries at once."""
        for t in self.backoff.waiting():
            if t not in self.active and t not in self.standby:
                self.backoff.end(t)

    def _owner(self, tp: TopicPartition) -> StreamTask | StandbyTask | None:
        tasks: list[StreamTask | StandbyTask] = [*self.active.values(), *self.standby.values()]
        for task in tasks:
            if tp in task.changelog_tps():
                return task
        return None

    def on_restored(self, tps: list[TopicPartition]) -> list[StreamTask]:
        """Tasks all of whose changelog partitions are complete go RUNNING."""
        running = []
        for task in self.active.values():
            if task.state != RESTORING:
                continue
            if all(tp in self.reader.completed for tp in task.changelog_tps()):
                task.complete_restoration(self.reader)
                running.append(task)
        return running

    def on_invalid(self, tps: list[TopicPartition]) -> None:
        for tp in tps:
            task = self._owner(tp)
            if isinstance(task, StreamTask):
                task.restart_restoration(self.reader)
            elif isinstance(task, StandbyTask):
                task.sm.wipe("invalid changelog offset (standby)")
                for t in task.changelog_tps():
                    self.reader.restart(t, 0)

    def all_ready(self) -> bool:
        """The thread may go RUNNING. Only active tasks count under KAFKA-8187 (a standby
        that could not lock is forgotten); the fix also waits for every standby."""
        if any(t.state != RUNNING for t in self.active.values()):
            return False
        if self.cfg.bug(bugs.KAFKA_8187):
            return True
        return all(sb.initialized for sb in self.standby.values())

    def running(self) -> list[StreamTask]:
        return [t for t in self.active.values() if t.state == RUNNING]

    # -- revocation / shutdown ---------------------------------------------------------

    def suspend_all(self) -> None:
        """After the thread committed: suspend running tasks, close the others cleanly."""
        for t in sorted(self.active):
            task = self.active[t]
            if task.state == RUNNING:
                task.suspend()
            elif task.state != SUSPENDED:
                self.active.pop(t).close(self.reader, clean=True)
        self._end_streaks()

    def checkpoint_standbys(self) -> None:
        for sb in self.standby.values():
            sb.maybe_checkpoint()

    def close_all(self, clean: bool) -> None:
        for t in sorted(self.active):
            self.active.pop(t).close(self.reader, clean=clean)
        for t in sorted(self.standby):
            sb = self.standby.pop(t)
            if clean:
                sb.close(self.reader)
            elif sb.initialized:  # dirty: no checkpoint, just release
                self.reader.unregister(sb.changelog_tps())
                sb.sm.close()
                self.sdir.unlock(sb.task, self.thread)
                sb.closed = True
        self._end_streaks()
