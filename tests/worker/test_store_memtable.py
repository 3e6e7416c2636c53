"""The evidence behind the `memtable-flush` trace event: a real RocksDB store reports a
memtable switch when its write buffer fills, and not after an explicit flush."""

from __future__ import annotations

from pathlib import Path

from workloads.worker.store import KeyValueStore


def _fill_until_switch(store: KeyValueStore, limit: int = 20_000) -> int:
    for n in range(limit):
        store.put(f"key-{n % 500}", "v" * 60)
        if store.memtable_switched():
            return n
    raise AssertionError(f"no memtable switch in {limit} writes")


def test_a_full_write_buffer_is_seen_as_one_switch(tmp_path: Path) -> None:
    store = KeyValueStore(tmp_path / "s", 64 * 1024)
    store.open()
    assert not store.memtable_switched()
    first = _fill_until_switch(store)
    assert first > 10  # not on the first writes: the buffer had to fill
    store.put("one-more", "v")
    assert not store.memtable_switched()  # reported once, not on every later write
    store.close()


def test_an_explicit_flush_or_reopen_is_no_switch(tmp_path: Path) -> None:
    store = KeyValueStore(tmp_path / "s", 64 * 1024)
    store.open()
    for n in range(300):
        store.put(f"key-{n}", "v" * 60)
    assert not store.memtable_switched()
    store.flush()  # a checkpoint's flush empties the memtable: not a background flush
    store.put("after", "v")
    assert not store.memtable_switched()
    for n in range(300):
        store.put(f"key-{n}", "w" * 60)
    store.memtable_switched()
    store.close()
    store.open()
    store.put("reopened", "v")
    assert not store.memtable_switched()
    store.close()
