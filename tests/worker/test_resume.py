"""A task assigned back to its thread after a suspend restores what its changelogs gained
meanwhile before it runs again (Kafka Streams' SUSPENDED -> RESTORING). Found by `all`
(seed 1, fixed worker): pod-0, paused past its session, was told "revoked" on its return,
got its task back from pod-1 and ran its stale store: 250 events processed twice, both
committed (duplicate-output 241). Pure logic on a real RocksDB store; the reader is a
recording fake (the broker side is the e2e runs')."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from worker_fakes import RecordingReader

from workloads.worker.config import parse_args
from workloads.worker.control import ControlFile
from workloads.worker.restore import ChangelogReader
from workloads.worker.statedir import StateDirectory
from workloads.worker.task_active import RESTORING, RUNNING, SUSPENDED, StreamTask
from workloads.worker.trace import Tracer


def test_a_resumed_task_restores_from_its_store_offsets_before_it_runs(tmp_path: Path) -> None:
    cfg = parse_args(["--bootstrap", "127.0.0.1:9", "--state-dir", str(tmp_path / "state")])
    task = StreamTask(cfg, "0_0", StateDirectory(cfg.app_dir), Tracer(None, "pod-0"),
                      ControlFile(None), lambda _: None, "StreamThread-1")
    fake = RecordingReader()
    reader = cast(ChangelogReader, fake)
    assert task.try_initialize(reader)
    task.complete_restoration(reader)
    assert task.state == RUNNING
    task.committed({task.sm.tp(store): 740 for store in task.sm.logged})
    task.suspend()
    assert task.state == SUSPENDED
    fake.registered.clear()

    task.resume(reader)

    assert task.state == RESTORING, "a resumed task must not run before it has restored"
    assert sorted(fake.unregistered) == sorted(task.changelog_tps())
    assert sorted(fake.registered) == sorted((tp, 741) for tp in task.changelog_tps())
    task.complete_restoration(reader)
    assert task.state == RUNNING
    task.sm.close()
