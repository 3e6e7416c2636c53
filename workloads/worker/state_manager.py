"""Per-task state: the stores of one task directory, their changelog positions and the
`.checkpoint` file (Kafka Streams' ProcessorStateManager).

It decides, at initialisation, where each store's restoration starts: from the checkpoint
offset + 1, or from the beginning; and it applies the exactly-once corruption rule (no
checkpoint entry but a non-empty store => wipe, since flushed memtables may hold writes of
aborted transactions).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from kafka.consumer.fetcher import ConsumerRecord

from workloads.ledger.contract import BALANCE_STORE, DEDUP_STORE, STORES, Balance
from workloads.worker import bugs
from workloads.worker.checkpoint import (
    CHECKPOINT_FILE,
    Offsets,
    delete_checkpoint,
    make_dirs_durable,
    offsets_for_trace,
    read_checkpoint,
    write_checkpoint,
)
from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.store import KeyValueStore
from workloads.worker.trace import Tracer

log = logging.getLogger(__name__)


def logged_stores(cfg: WorkerConfig) -> tuple[str, ...]:
    """Stores with a changelog (the dedup-not-logged mutant drops the dedup changelog)."""
    if cfg.bug(bugs.DEDUP_NOT_LOGGED):
        return tuple(s for s in STORES if s != DEDUP_STORE)
    return STORES


class StateManager:
    def __init__(
        self,
        cfg: WorkerConfig,
        task: str,
        partition: int,
        task_dir: Path,
        tracer: Tracer,
        control: ControlFile,
        kind: str,
    ) -> None:
        self.cfg = cfg
        self.task = task
        self.partition = partition
        self.task_dir = task_dir
        self.tracer = tracer
        self.control = control
        self.kind = kind
        self.thread = ""
        wal = cfg.bug(bugs.STORE_WAL_NO_SYNC)
        self.stores = {s: KeyValueStore(task_dir / s, cfg.write_buffer_bytes, wal) for s in STORES}
        # Deleting a checkpoint must reach the disk, or a machine crash brings it back.
        self.durable_delete = not cfg.bug(bugs.CHECKPOINT_DELETE_NO_FSYNC)
        self.logged = logged_stores(cfg)
        # store -> offset of the last changelog record the store reflects (None: unknown)
        self.offsets: dict[str, int | None] = {s: None for s in self.logged}

    @property
    def checkpoint_path(self) -> Path:
        return self.task_dir / CHECKPOINT_FILE

    def tp(self, store: str) -> tuple[str, int]:
        return (self.cfg.changelog(store), self.partition)

    def emit(self, event: str, **fields: object) -> None:
        self.tracer.emit(self.thread, event, task=self.task, **fields)

    # -- initialisation --------------------------------------------------------------

    def read_checkpoint(self) -> Offsets | None:
        try:
            ckpt = read_checkpoint(self.checkpoint_path)
        except (ValueError, OSError) as e:
            # An unreadable checkpoint is no checkpoint (the corruption rule then applies).
            self.emit("checkpoint-delete", reason=f"unreadable: {e}")
            delete_checkpoint(self.checkpoint_path, self.durable_delete)
            return None
        if ckpt is not None:
            self.emit("checkpoint-read", offsets=offsets_for_trace(ckpt))
        return ckpt

    def initialize(self, ckpt: Offsets | None, delete_after_read: bool) -> dict[str, int]:
        """Open the stores, apply the corruption rule, trace `task-init` per store and
        return where each logged store's restoration starts (0 = beginning)."""
        make_dirs_durable(self.task_dir)
        for s in self.stores.values():
            s.open()
        if delete_after_read and ckpt is not None:
            # Under EOS the checkpoint is only valid until the task writes again.
            delete_checkpoint(self.checkpoint_path, self.durable_delete)
            self.emit("checkpoint-delete", reason="eos-init")
        ckpt = ckpt or {}
        missing = [s for s in self.logged if self.tp(s) not in ckpt]
        nonempty = [s for s in missing if not self.stores[s].is_empty()]
        if nonempty and self.cfg.eos and not self.cfg.bug(bugs.EOS_NO_CORRUPTION_WIPE):
            self.wipe(f"no checkpoint offset for non-empty store(s) {nonempty} under EOS")
            ckpt = {}
        starts: dict[str, int] = {}
        for name, store in self.stores.items():
            off = ckpt.get(self.tp(name)) if name in self.logged else None
            digest, entries = store.digest()
            self.tracer.emit(
                self.thread, "task-init", task=self.task, kind=self.kind, store=name,
                checkpoint=off, digest=digest, entries=entries,
            )
            if name in self.logged:
                self.offsets[name] = off
                starts[name] = 0 if off is None else off + 1
        return starts

    def wipe(self, reason: str) -> None:
        """Delete every store of the task (and its checkpoint); reopen them empty."""
        self.emit("wipe", reason=reason)
        delete_checkpoint(self.checkpoint_path, self.durable_delete)
        for s in self.stores.values():
            was_open = s.is_open
            s.wipe()
            if was_open:
                s.open()
        self.offsets = {s: None for s in self.logged}

    def changelog_applier(self, store: str) -> Callable[[list[ConsumerRecord]], None]:
        """Writes changelog records into the store, advancing its position: restoration
        (active) and standby updates apply them the same way.

        Under at-least-once nothing fences a member the group has dropped (paused or cut
        off past its session): when it runs again it still sends what its producer held
        and processes what it had fetched, against its old store, before its next commit
        fails. Those balance records land after the newer ones of the member that took the
        task over (issue 33: a pod paused 17.7 s re-processed input 50-106 of its
        partition and appended them to the changelog after another pod's balances through
        input 215; the next restore kept them as the latest: lost history 1971). A
        balance carries the input offset of the last event applied to it, and a legitimate
        owner only ever writes an account's balance further on, so a record older than the
        balance the store holds is such a straggler: the store keeps its balance (and an
        active task sends its balances to the changelog again before it processes:
        StreamTask._write_back_balances, for a balance the changelog never got)."""
        kv = self.stores[store]
        keep_newest = store == BALANCE_STORE and not self.cfg.eos

        def apply(records: list[ConsumerRecord]) -> None:
            stale = 0
            for r in records:
                key = r.key.decode()
                value = None if r.value is None else r.value.decode()
                if keep_newest and value is not None and _older_balance(value, kv.get(key)):
                    stale += 1
                else:
                    kv.put(key, value)
                self.offsets[store] = r.offset
            if stale:  # stragglers, or records a store ahead of its checkpoint has passed
                log.info("task %s (%s): kept the store's newer balance over %d older %s "
                         "changelog record(s) up to offset %d", self.task, self.kind,
                         stale, store, records[-1].offset)

        return apply

    # -- checkpoints ---------------------------------------------------------------

    def checkpoint_offsets(self) -> Offsets:
        return {self.tp(s): o for s, o in self.offsets.items() if o is not None}

    def flush(self) -> None:
        for s in self.stores.values():
            if s.is_open:
                s.flush()

    def checkpoint(self, reason: str, offsets: Offsets | None = None) -> None:
        """Flush the stores, then write the checkpoint (after the fault-injection delay).
        `offsets` overrides the tracked positions (the KAFKA-8187 stale write-back)."""
        if not (self.cfg.bug(bugs.CHECKPOINT_WITHOUT_FLUSH)
                or self.cfg.bug(bugs.STORE_WAL_NO_SYNC)):  # that one trusts the log instead
            self.flush()
        delay = self.control.checkpoint_delay_ms(reason)
        if delay:
            self.emit("checkpoint-delay", delay_ms=delay, reason=reason)
            time.sleep(delay / 1000)
        offs = self.checkpoint_offsets() if offsets is None else offsets
        write_checkpoint(self.checkpoint_path, offs)
        self.emit("checkpoint-write", offsets=offsets_for_trace(offs), reason=reason)

    def delete_checkpoint(self, reason: str) -> None:
        if delete_checkpoint(self.checkpoint_path, self.durable_delete):
            self.emit("checkpoint-delete", reason=reason)

    def close(self) -> None:
        for s in self.stores.values():
            s.close()


def _older_balance(incoming: str, current: str | None) -> bool:
    """Whether a balances changelog record reflects fewer events than the stored balance:
    the input offset of the last event applied to it is lower."""
    return current is not None and Balance.decode(incoming).offset < Balance.decode(current).offset
