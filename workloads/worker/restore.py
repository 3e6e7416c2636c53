"""The changelog reader of one stream thread (Kafka Streams' StoreChangelogReader).

One restore consumer, no group, manual assignment, no offset reset policy: it restores
active tasks (seek to checkpoint + 1 or the beginning, read to the end offset, then the
partition is *completed*) and keeps standby tasks up to date (read forever). Records are
handed to a per-partition callback; the reader knows nothing about stores.

The end offset is the log's end, not the last stable offset a read_committed consumer
reports (Kafka Streams since KAFKA-10167): a transaction left open by a crashed producer
pins the LSO below records other producers committed since, and a restore that stopped
there would run the task on a store missing them. Read committed, the position passes the
open transaction only once it is aborted or committed, so the restore waits it out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import kafka.errors as Errors
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import OffsetSpec
from kafka.consumer.fetcher import ConsumerRecord

from workloads.worker import bugs
from workloads.worker.config import WorkerConfig
from workloads.worker.trace import Tracer

log = logging.getLogger(__name__)

Apply = Callable[[list[ConsumerRecord]], None]


@dataclass
class _Entry:
    task: str
    store: str
    apply: Apply
    start: int
    end: int | None  # None: standby, never completes
    restored: int = 0


class ChangelogReader:
    def __init__(self, cfg: WorkerConfig, tracer: Tracer, thread: str) -> None:
        self.cfg = cfg
        self.tracer = tracer
        self.thread = thread
        isolation: Literal["read_uncommitted", "read_committed"] = (
            "read_uncommitted" if cfg.bug(bugs.RESTORE_READ_UNCOMMITTED) else "read_committed"
        )
        self.consumer = KafkaConsumer(
            bootstrap_servers=cfg.bootstrap,
            client_id=f"{cfg.instance_id}-{thread}-restore-consumer",
            group_id=None,
            enable_auto_commit=False,
            isolation_level=isolation,
            # an invalid offset must surface: wipe and restore again. kafka-python takes "none"
            # (OffsetResetStrategy.NONE); its stub lists only the resetting strategies.
            auto_offset_reset="none",  # type: ignore[arg-type]
            max_poll_records=cfg.restore_max_poll_records,
        )
        self._admin: KafkaAdminClient | None = None  # the log ends, read uncommitted
        self.entries: dict[TopicPartition, _Entry] = {}
        # Partitions whose restoration completed. KAFKA-7672: never cleared.
        self.completed: set[TopicPartition] = set()
        self._reported: set[TopicPartition] = set()

    # -- registration ----------------------------------------------------------------

    def register(
        self, task: str, store: str, tp: TopicPartition, start: int, apply: Apply, active: bool
    ) -> None:
        end = self._log_end(tp) if active else None
        self.entries[tp] = _Entry(task, store, apply, start, end)
        self._reassign()
        self._seek(tp, start)
        if active and tp not in self.completed:
            self.tracer.emit(
                self.thread, "restore-start", task=task, store=store, partition=tp.partition,
                from_offset=start, end_offset=end,
            )

    def unregister(self, tps: list[TopicPartition]) -> None:
        for tp in tps:
            self.entries.pop(tp, None)
            self._reported.discard(tp)
        if not self.cfg.bug(bugs.KAFKA_7672):
            self.completed.difference_update(tps)
        self._reassign()

    def restart(self, tp: TopicPartition, start: int) -> None:
        """Seek an entry again (after a wipe because of an invalid offset)."""
        e = self.entries[tp]
        e.start, e.restored = start, 0
        if e.end is not None:
            e.end = self._log_end(tp)
        self._seek(tp, start)

    def _log_end(self, tp: TopicPartition) -> int:
        if self._admin is None:
            self._admin = KafkaAdminClient(bootstrap_servers=self.cfg.bootstrap,
                                           client_id=f"{self.consumer.config['client_id']}-ends")
        ends = self._admin.list_partition_offsets({tp: OffsetSpec.LATEST})
        return int(ends[tp].offset)

    def _reassign(self) -> None:
        self.consumer.assign(sorted(self.entries))
        if self.entries:
            self.consumer.pause(*[tp for tp, e in self.entries.items() if self._done(tp, e)])

    def _seek(self, tp: TopicPartition, start: int) -> None:
        if start <= 0:
            self.consumer.seek_to_beginning(tp)
        else:
            self.consumer.seek(tp, start)

    def _done(self, tp: TopicPartition, e: _Entry) -> bool:
        return e.end is not None and tp in self.completed

    # -- progress ------------------------------------------------------------------

    def restoring(self) -> bool:
        return any(e.end is not None and tp not in self.completed for tp, e in self.entries.items())

    def has_work(self) -> bool:
        # something to read, or a completion not yet reported to its task
        return any(
            not self._done(tp, e) or (e.end is not None and tp not in self._reported)
            for tp, e in self.entries.items()
        )

    def poll(self, timeout_ms: int) -> tuple[list[TopicPartition], list[TopicPartition]]:
        """One round: returns (partitions that completed now, partitions whose offset was
        invalid). A partition that is already in `completed` when registered completes at
        once, whatever its store holds (that is the KAFKA-7672 hazard)."""
        done: list[TopicPartition] = []
        invalid: list[TopicPartition] = []
        for tp, e in self.entries.items():
            if e.end is not None and tp in self.completed and tp not in self._reported:
                self._reported.add(tp)
                done.append(tp)
        if all(self._done(tp, e) for tp, e in self.entries.items()):
            return done, invalid
        try:
            batches = self.consumer.poll(timeout_ms=timeout_ms)
        except Errors.OffsetOutOfRangeError as exc:
            bad = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
            invalid = [tp for tp in bad if tp in self.entries] or [
                tp for tp, e in self.entries.items() if not self._done(tp, e)
            ]
            return done, invalid
        for tp, records in batches.items():
            entry = self.entries.get(tp)
            if entry is None or self._done(tp, entry):
                continue
            entry.apply(records)
            entry.restored += len(records)
        for tp, e in self.entries.items():
            if e.end is None or tp in self.completed:
                continue
            position = self.consumer.position(tp)  # None: not known yet
            if position is not None and position >= e.end:
                self.completed.add(tp)
                self._reported.add(tp)
                self.consumer.pause(tp)
                done.append(tp)
                self.tracer.emit(
                    self.thread, "restore-end", task=e.task, store=e.store,
                    partition=tp.partition, restored=e.restored, offset=e.end - 1,
                )
        return done, invalid

    def position(self, tp: TopicPartition) -> int:
        position = self.consumer.position(tp)
        if position is None:
            raise RuntimeError(f"position of {tp} unknown after its restoration completed")
        return position

    def close(self) -> None:
        self.consumer.close()
        if self._admin is not None:
            self._admin.close()
