"""A persistent key-value store: RocksDB through rocksdict, configured as Kafka Streams does.

The write-ahead log is always off (Kafka Streams' RocksDBStore sets disableWAL): a write
lives in the memtable until a flush. The write buffer is small on purpose, so background
flushes happen during a run and persist writes whatever the fate of their transaction.
A process killed without flushing loses exactly the memtable; flushed data survives.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from rocksdict import Options, Rdict, WriteOptions

from workloads.ledger.contract import store_digest
from workloads.worker.checkpoint import make_dirs_durable


class KeyValueStore:
    def __init__(self, path: Path, write_buffer_bytes: int, wal: bool = False) -> None:
        self.path = path
        self._write_buffer_bytes = write_buffer_bytes
        self._wal = wal  # the store-wal-no-sync mutant: a log written, never synced
        self._db: Rdict | None = None
        self._active_entries = 0  # active-memtable entries when last looked at

    def open(self) -> None:
        make_dirs_durable(self.path)
        opts = Options(raw_mode=True)
        opts.create_if_missing(True)
        opts.set_write_buffer_size(self._write_buffer_bytes)
        self._db = Rdict(str(self.path), opts)
        self._active_entries = 0
        wo = WriteOptions()
        # rocksdict's stub declares disable_wal a method; at run time it is a bool property
        wo.disable_wal = not self._wal  # type: ignore[method-assign,assignment]
        self._db.set_write_options(wo)

    @property
    def db(self) -> Rdict:
        if self._db is None:
            raise RuntimeError(f"store {self.path} is not open")
        return self._db

    @property
    def is_open(self) -> bool:
        return self._db is not None

    def get(self, key: str) -> str | None:
        raw = self.db.get(key.encode())
        return None if raw is None else raw.decode()

    def put(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.delete(key.encode())
        else:
            self.db.put(key.encode(), value.encode())

    def items(self) -> Iterator[tuple[str, str]]:
        for k, v in self.db.items():  # raw_mode: keys and values are bytes
            yield cast(bytes, k).decode(), cast(bytes, v).decode()

    def is_empty(self) -> bool:
        return next(iter(self.db.keys()), None) is None

    def digest(self) -> tuple[str, int]:
        """(store_digest, entry count) of the current contents."""
        entries = list(self.items())
        return store_digest(entries), len(entries)

    def unflushed(self) -> int:
        return self.db.property_int_value("rocksdb.num-entries-active-mem-table") or 0

    def memtable_switched(self) -> bool:
        """Whether RocksDB switched to a new active memtable since the last call (or the
        last explicit flush): the full one is being flushed to an SST file in the
        background, persisting its writes whatever their transaction's fate."""
        entries = self.unflushed()
        switched = entries < self._active_entries
        self._active_entries = entries
        return switched

    def flush(self) -> None:
        self.db.flush()
        self._active_entries = 0

    def close(self) -> None:
        # RocksDB flushes memtables on close (avoid_flush_during_shutdown is off), which is
        # why even a dirty close persists uncommitted writes: EOS must wipe after it.
        if self._db is not None:
            self._db.close()
            self._db = None

    def wipe(self) -> None:
        """Close and delete every file of the store (used on corruption / invalid offset)."""
        self.close()
        shutil.rmtree(self.path, ignore_errors=True)
