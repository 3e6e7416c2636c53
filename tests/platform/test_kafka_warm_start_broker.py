"""Warm broker starts against a real broker: a damaged class archive never fails a start
(the JVM checks it and loads the classes as usual)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.kafka import jvm_archive
from harness.kafka.cluster import KafkaCluster
from harness.procs import ProcessRegistry

pytestmark = pytest.mark.kafka


def test_a_broker_with_a_damaged_archive_starts_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = ProcessRegistry(tmp_path)
    try:
        used = KafkaCluster(tmp_path / "prepare", registry).prepare()  # trains if missing
        real = Path(used["jvm_archive_path"])
        assert jvm_archive.is_usable(real), used

        cache = tmp_path / "cache"  # the same name, in a cache of this test's own
        damaged = cache / f"kafka-{real.name.split('-')[1]}" / "cds" / real.name
        damaged.parent.mkdir(parents=True)
        shutil.copyfile(real, damaged)
        shutil.copyfile(jvm_archive.size_record(real), jvm_archive.size_record(damaged))
        with open(damaged, "r+b") as archive:  # same size, flipped bytes mid-file
            archive.seek(damaged.stat().st_size // 2)
            archive.write(b"\xff" * 64)
        monkeypatch.setattr(jvm_archive, "kafka_cache", lambda version=None: damaged.parent.parent)

        cluster = KafkaCluster(tmp_path / "run", registry)
        cluster.start()
        assert cluster.warm_used["jvm_archive_path"] == str(damaged)
        log = (tmp_path / "run" / "kafka" / "broker-1.log").read_text()
        assert "Unable to use shared archive" in log  # the JVM fell back, and said so
        assert cluster.running_ids() == {1}
    finally:
        registry.stop_all()
