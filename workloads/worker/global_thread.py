"""The global thread: reads the accounts topic (compacted) into the global store, which
every task joins against, with its own checkpoint `<app>/global/.checkpoint`.

Its consumer has no offset reset policy, so a checkpoint offset that no longer exists
(records deleted past it) surfaces as an invalid offset. With KIP-406 (the fix) the store
is wiped and rebuilt from earliest while stream processing is blocked (`ready` cleared), so
a join never misses a value the topic holds; with the `KIP-406` switch the process dies.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import kafka.errors as Errors
from kafka import KafkaConsumer, TopicPartition

from workloads.ledger.contract import Account
from workloads.worker import bugs
from workloads.worker.checkpoint import (
    CHECKPOINT_FILE,
    delete_checkpoint,
    offsets_for_trace,
    read_checkpoint,
    write_checkpoint,
)
from workloads.worker.config import WorkerConfig
from workloads.worker.control import ControlFile
from workloads.worker.statedir import GLOBAL_DIR
from workloads.worker.store import KeyValueStore
from workloads.worker.trace import Tracer

log = logging.getLogger(__name__)
THREAD = "global"
TASK = "global"


class GlobalInvalidOffset(RuntimeError):
    """Fatal under the KIP-406 switch: the process must die."""


class GlobalNotReady(RuntimeError):
    """A join while the global store is being rebuilt: the record must wait."""


class GlobalStreamThread(threading.Thread):
    def __init__(
        self, cfg: WorkerConfig, tracer: Tracer, control: ControlFile, on_fatal: Callable[[], None]
    ) -> None:
        super().__init__(name="GlobalStreamThread", daemon=True)
        self.cfg, self.tracer, self.control, self.on_fatal = cfg, tracer, control, on_fatal
        self.dir = cfg.app_dir / GLOBAL_DIR
        self.store = KeyValueStore(self.dir / "accounts", cfg.write_buffer_bytes)
        self.ready = threading.Event()  # cleared while (re)building: stream threads wait
        self.initialized = threading.Event()  # first restore done (or failed)
        self.stop_requested = threading.Event()
        self.error: BaseException | None = None
        self.offset: int | None = None  # last accounts offset applied
        self._store_lock = threading.Lock()
        self._checkpointed: int | None = -2  # offset of the last checkpoint written

    # -- reads from stream threads ---------------------------------------------------

    def version(self, account: str) -> int | None:
        """Raises GlobalNotReady while the store is rebuilt. Checked under the store lock,
        which the rebuild takes to clear `ready`: a stream thread that saw `ready` before
        its batch may still be joining when the global thread finds the invalid offset."""
        with self._store_lock:
            if not self.ready.is_set():
                raise GlobalNotReady(account)
            raw = self.store.get(account) if self.store.is_open else None
        return None if raw is None else Account.decode(raw.encode()).version

    # -- the thread ------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._run()
        except BaseException as e:
            self.error = e
            self.tracer.emit(THREAD, "fatal", error=f"{type(e).__name__}: {e}")
            self.on_fatal()
        finally:
            self.initialized.set()

    def _run(self) -> None:
        self.consumer = KafkaConsumer(
            bootstrap_servers=self.cfg.bootstrap,
            client_id=f"{self.cfg.instance_id}-global-consumer",
            group_id=None,
            enable_auto_commit=False,
            isolation_level="read_committed",
            # kafka-python takes "none" (OffsetResetStrategy.NONE); its stub does not list it
            auto_offset_reset="none",  # type: ignore[arg-type]
        )
        parts = self.consumer.partitions_for_topic(self.cfg.accounts_topic) or {0}
        self.tps = [TopicPartition(self.cfg.accounts_topic, p) for p in sorted(parts)]
        self.consumer.assign(self.tps)
        self.store.open()
        ckpt = self._read_checkpoint()
        digest, entries = self.store.digest()
        self.tracer.emit(
            THREAD, "task-init", task=TASK, kind="global", store="accounts",
            checkpoint=self.offset, digest=digest, entries=entries,
        )
        start = 0 if ckpt is None else ckpt + 1
        self._restore(start)
        last_ckpt = time.monotonic()
        while not self.stop_requested.is_set():
            try:
                self._apply(self.consumer.poll(timeout_ms=100))
            except Errors.OffsetOutOfRangeError:
                self.on_invalid_offset()
            due = (time.monotonic() - last_ckpt) * 1000 >= self.cfg.commit_interval_ms
            if due and self.offset != self._checkpointed:
                self._checkpoint("commit")
                last_ckpt = time.monotonic()
        self._checkpoint("close")
        self.store.close()
        self.consumer.close()

    def _read_checkpoint(self) -> int | None:
        try:
            offs = read_checkpoint(self.dir / CHECKPOINT_FILE)
        except (ValueError, OSError):
            offs = None
        if offs is None:
            if not self.store.is_empty():
                # no checkpoint for a non-empty global store: rebuild it from scratch
                self._wipe("no checkpoint for a non-empty global store")
            return None
        self.tracer.emit(THREAD, "checkpoint-read", task=TASK, offsets=offsets_for_trace(offs))
        self.offset = offs.get((self.cfg.accounts_topic, 0))
        return self.offset

    def _restore(self, start: int) -> None:
        """Read to the end offset before anyone may join (initial and after a wipe)."""
        while True:
            for tp in self.tps:
                if start <= 0:
                    self.consumer.seek_to_beginning(tp)
                else:
                    self.consumer.seek(tp, start)
            end = sum(self.consumer.end_offsets(self.tps).values())
            self.tracer.emit(THREAD, "global-restore-start", from_offset=start, end_offset=end)
            restored = 0
            try:
                # a position not known yet (None) counts as nothing restored
                while sum(self.consumer.position(tp) or 0 for tp in self.tps) < end:
                    if self.stop_requested.is_set():
                        return
                    restored += self._apply(self.consumer.poll(timeout_ms=100))
            except Errors.OffsetOutOfRangeError:
                self.on_invalid_offset(restoring=True)
                start = 0
                continue
            self.tracer.emit(
                THREAD, "global-restore-end", from_offset=start, end_offset=end, restored=restored
            )
            self._checkpoint("restored")
            self.ready.set()
            self.initialized.set()
            return

    def _apply(self, batches: dict) -> int:
        n = 0
        for records in batches.values():
            for r in records:
                self.store.put(r.key.decode(), None if r.value is None else r.value.decode())
                self.offset = r.offset
                n += 1
        return n

    def on_invalid_offset(self, restoring: bool = False) -> None:
        offset = self.offset
        if self.cfg.bug(bugs.KIP_406):
            self.tracer.emit(THREAD, "global-invalid-offset", offset=offset, action="die")
            raise GlobalInvalidOffset(f"invalid offset {offset} for the global store")
        self.tracer.emit(THREAD, "global-invalid-offset", offset=offset, action="wipe")
        if not self.cfg.bug(bugs.GLOBAL_REBUILD_NONBLOCKING):
            with self._store_lock:  # no join in flight sees the wipe below
                self.ready.clear()  # stream threads stop joining until the rebuild is done
        self._wipe("invalid offset in the global thread")
        if not restoring:
            self._restore(0)

    def _wipe(self, reason: str) -> None:
        self.tracer.emit(THREAD, "wipe", task=TASK, reason=reason)
        delete_checkpoint(self.dir / CHECKPOINT_FILE)
        with self._store_lock:  # a stream thread may be joining right now
            self.store.wipe()
            self.store.open()
        self.offset = None

    def _checkpoint(self, reason: str) -> None:
        if not self.store.is_open:
            return
        self.store.flush()
        delay = self.control.checkpoint_delay_ms(reason)
        if delay:
            self.tracer.emit(THREAD, "checkpoint-delay", task=TASK, delay_ms=delay, reason=reason)
            time.sleep(delay / 1000)
        offs = {} if self.offset is None else {(self.cfg.accounts_topic, 0): self.offset}
        write_checkpoint(self.dir / CHECKPOINT_FILE, offs)
        self._checkpointed = self.offset
        self.tracer.emit(
            THREAD, "checkpoint-write", task=TASK, offsets=offsets_for_trace(offs), reason=reason
        )
