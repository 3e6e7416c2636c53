"""A join never sees the global store wiped for a rebuild (the fixed worker). Found by the
default nightly: `global-rebuild-nonblocking` seed 2, fixed worker, stale-global 24. A
stream thread checked `ready` once per batch; the global thread found the invalid offset
mid-batch, wiped the store, and the rest of the batch joined against it (null versions).
Now a join checks `ready` under the store lock and a record that meets a rebuild waits in
its task's queue. Pure logic on a real RocksDB store; no consumer is started."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from worker_fakes import RecordingReader

from workloads.ledger.contract import BALANCE_STORE, Account, Event
from workloads.worker import bugs
from workloads.worker.collector import RecordCollector
from workloads.worker.config import parse_args
from workloads.worker.control import ControlFile
from workloads.worker.global_thread import GlobalNotReady, GlobalStreamThread
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.task_active import StreamTask
from workloads.worker.trace import Tracer


def _global_thread(tmp_path: Path, *switches: str) -> GlobalStreamThread:
    args = ["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state")]
    if switches:
        args += ["--bugs", ",".join(switches)]
    g = GlobalStreamThread(parse_args(args), Tracer(None, "pod-0"), ControlFile(None),
                           on_fatal=lambda: None)
    g.store.open()
    g.store.put("acct-00001", Account("acct-00001", 3, "gold").encode().decode())
    g.ready.set()
    return g


def test_a_join_during_a_rebuild_waits_in_the_fixed_worker(tmp_path: Path) -> None:
    g = _global_thread(tmp_path)
    assert g.version("acct-00001") == 3
    g.on_invalid_offset(restoring=True)  # the wipe; `_restore` would follow
    with pytest.raises(GlobalNotReady):
        g.version("acct-00001")
    g.store.close()


def test_the_switch_joins_against_the_half_built_store(tmp_path: Path) -> None:
    g = _global_thread(tmp_path, bugs.GLOBAL_REBUILD_NONBLOCKING)
    g.on_invalid_offset(restoring=True)
    assert g.version("acct-00001") is None  # what stale-global reports
    g.store.close()


class RecordingCollector:
    def __init__(self) -> None:
        self.sent: list[tuple[Any, ...]] = []

    def send(self, *args: Any) -> None:
        self.sent.append(args)


def test_a_record_that_meets_a_rebuild_stays_first_in_its_queue(tmp_path: Path) -> None:
    def rebuilding(account: str) -> int | None:
        raise GlobalNotReady(account)

    cfg = parse_args(["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state")])
    task = StreamTask(cfg, "0_0", StateDirectory(cfg.app_dir), Tracer(None, "pod-0"),
                      ControlFile(None), rebuilding, "StreamThread-1")
    reader = cast(ChangelogReader, RecordingReader())
    assert task.try_initialize(reader)
    task.complete_restoration(reader)
    records = [SimpleNamespace(offset=o, value=Event(f"e{o}", "acct-00001", 5).encode())
               for o in (10, 11)]
    task.queue.extend(records)  # type: ignore[arg-type]
    collector = RecordingCollector()

    with pytest.raises(GlobalNotReady):
        task.process_one(cast(RecordCollector, collector))

    assert list(task.queue) == records, "the record must be processed after the rebuild"
    assert collector.sent == [] and task.next_offset is None
    assert task.sm.stores[BALANCE_STORE].get("acct-00001") is None
    task.sm.close()
