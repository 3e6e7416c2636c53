"""The storage faults on a real pod whose state.dir is its fault filesystem (as a run whose
plan has a storage fault sets it up): power-loss, io-delay, io-error; nothing stays mounted."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from faults.context import FaultContext
from faults.faultfs.control import request
from faults.observe import TraceWatcher
from harness.platforms.faultfs import FaultFsMounts, mountpoint_of
from harness.platforms.local import LocalPlatform
from harness.sut.python import PythonWorker
from tests.faultfs.mounting import fuse_missing
from tests.faults.test_fault_kinds import Fleet

pytestmark = [pytest.mark.kafka, pytest.mark.fuse, pytest.mark.needs("fusermount3")]


class StorageFleet(Fleet):
    def __init__(self, bootstrap: str, run_dir: Path) -> None:
        super().__init__(bootstrap, run_dir)
        settings = self.platform.settings
        self.platform = LocalPlatform(run_dir, self.registry, PythonWorker(), settings,
                                      node_count=2, faultfs=FaultFsMounts(self.registry))
        self.watcher = TraceWatcher(self.platform, self.app)
        self.ctx = FaultContext(platform=self.platform, application_id=self.app,
                                storage=self.platform)

    def mnt(self, pod: str = "pod-0") -> Path:
        return mountpoint_of(self.platform.volume(pod).resolve())

    def gated(self, pod: str = "pod-0") -> dict[str, int]:
        return dict(request(str(self.mnt(pod)), {"cmd": "status"})["gated"])


@pytest.fixture
def sfleet(kafka_bootstrap: str, tmp_path: Path) -> Iterator[StorageFleet]:
    reason = fuse_missing()
    if reason:
        pytest.skip(reason)
    fleet = StorageFleet(kafka_bootstrap, tmp_path)
    try:
        yield fleet
    finally:
        try:
            fleet.platform.teardown()
        finally:
            fleet.registry.stop_all(grace_s=5)
        assert not any(os.path.ismount(p) for p in tmp_path.rglob("state.mnt"))


def test_power_loss_kills_rolls_back_and_the_heal_restarts(sfleet: StorageFleet) -> None:
    sfleet.platform.add_pod("pod-0", "node-0")
    assert os.path.ismount(sfleet.mnt())
    pid = sfleet.wait_running("pod-0")
    sfleet.produce(40)
    sfleet.wait_committed("pod-0", pid)
    details = sfleet.apply("power-loss")
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert set(details["undone"]) == {"names_undone", "files_rolled_back", "paths"}
    # RocksDB's LOG and OPTIONS files, the trace of work since the last fsync, are undone.
    assert details["undone"]["files_rolled_back"] + details["undone"]["names_undone"] > 0
    assert any(path.endswith("/balances/LOG") for path in details["undone"]["paths"]), details
    assert os.path.ismount(sfleet.mnt())  # mounted again, ready for the restart
    sfleet.heal("power-loss")
    assert sfleet.wait_running("pod-0") != pid


def test_io_delay_and_io_error_hit_the_checkpoint_files(sfleet: StorageFleet) -> None:
    sfleet.platform.add_pod("pod-0", "node-0")
    pid = sfleet.wait_running("pod-0")
    sfleet.produce(20)
    sfleet.wait_committed("pod-0", pid)
    rule = sfleet.apply("io-delay", ms=200)
    assert rule["ops"] == ["fsync", "rename"] and rule["pattern"] == "*.checkpoint*"
    sfleet.platform.stop_pod("pod-0")  # a clean close writes every task's checkpoint
    assert sfleet.gated().get("rename", 0) >= 1
    sfleet.heal("io-delay")
    sfleet.platform.start_pod("pod-0")
    pid = sfleet.wait_running("pod-0")
    sfleet.apply("io-error", error="ENOSPC")
    sfleet.platform.stop_pod("pod-0")
    assert sfleet.gated().get("write", 0) >= 1  # the close checkpoints could not be written
    task_dirs = list((sfleet.platform.volume("pod-0") / sfleet.app).glob("0_*"))
    assert task_dirs and not any((d / ".checkpoint").exists() for d in task_dirs)
    sfleet.heal("io-error")
    sfleet.platform.start_pod("pod-0")
    assert sfleet.wait_running("pod-0") != pid
