"""Warm broker starts, pure parts: archive naming and the use/train decision, storage
templates (which config they are shared by, each node's own ids)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.kafka import jvm_archive, storage_template
from harness.kafka.cluster import BrokerNode, broker_properties
from harness.kafka.jvm_archive import BrokerArchive

UUID_TEXT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{21}$")


def _files(tmp_path: Path) -> tuple[Path, list[Path]]:
    java = tmp_path / "java"
    java.write_text("jvm")
    jars = [tmp_path / "a.jar", tmp_path / "b.jar"]
    for jar in jars:
        jar.write_text(jar.name)
    return java, jars


def test_archive_key_follows_java_jars_and_flags(tmp_path: Path) -> None:
    java, jars = _files(tmp_path)
    key = jvm_archive.archive_key(java, jars, ["-Xmx384m"])
    assert key == jvm_archive.archive_key(java, jars, ["-Xmx384m"])
    assert key != jvm_archive.archive_key(java, jars, ["-Xmx512m"])
    assert key != jvm_archive.archive_key(java, jars[:1], ["-Xmx384m"])
    jars[1].write_text("another build of b")
    assert key != jvm_archive.archive_key(java, jars, ["-Xmx384m"])
    name = jvm_archive.archive_name("4.1.2", "broker", key)
    assert name == f"kafka-4.1.2-broker-{key}.jsa"


@pytest.mark.parametrize(
    ("on_disk", "recorded", "use"),
    [(None, None, False), (None, 10, False), (10, None, False), (0, 0, False),
     (5, 10, False), (11, 10, False), (10, 10, True)],
)
def test_an_archive_is_used_only_whole(on_disk: int | None, recorded: int | None,
                                       use: bool) -> None:
    assert jvm_archive.usable(on_disk, recorded) is use


def test_publish_renames_a_checked_archive_with_its_size(tmp_path: Path) -> None:
    archive = tmp_path / "broker.jsa"
    temporary = jvm_archive.temporary_name(archive)
    temporary.write_bytes(b"x" * 100)
    assert not jvm_archive.publish(temporary, archive, lambda _: False)
    assert not temporary.exists() and not archive.exists()
    assert BrokerArchive(archive, "java", "", ()).flags_to_use() == []

    temporary.write_bytes(b"x" * 100)
    assert jvm_archive.publish(temporary, archive, lambda _: True)
    assert jvm_archive.is_usable(archive) and not temporary.exists()
    flags = BrokerArchive(archive, "java", "", ()).flags_to_use()
    assert f"-XX:SharedArchiveFile={archive}" in flags and "-Xshare:auto" in flags

    with open(archive, "r+b") as truncate:  # a truncated archive crashes Java 17: unused
        truncate.truncate(50)
    assert not jvm_archive.is_usable(archive)
    assert BrokerArchive(archive, "java", "", ()).flags_to_use() == []


def test_one_process_trains_the_others_start_without(tmp_path: Path) -> None:
    archive = tmp_path / "cds" / "broker.jsa"
    with jvm_archive.training_turn(archive) as mine:
        assert mine
        with jvm_archive.training_turn(archive) as theirs:  # another open file: locked
            assert not theirs
        assert BrokerArchive(archive, "java", "", ()).ensure(_must_not_train) == "busy"


def _must_not_train(temporary: Path) -> None:
    raise AssertionError("trained while another process held the turn")


def test_a_failed_training_leaves_no_file_and_fails_no_start(tmp_path: Path) -> None:
    archive = BrokerArchive(tmp_path / "broker.jsa", "java", "", ())

    def broken(temporary: Path) -> None:
        temporary.write_bytes(b"half")
        raise RuntimeError("broker did not start")

    assert archive.ensure(broken) == "failed: broker did not start"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broker.jsa.lock"]
    assert archive.flags_to_use() == []


def test_a_present_archive_is_not_trained_again(tmp_path: Path) -> None:
    path = tmp_path / "broker.jsa"
    temporary = jvm_archive.temporary_name(path)
    temporary.write_bytes(b"archive")
    assert jvm_archive.publish(temporary, path, lambda _: True)
    assert BrokerArchive(path, "java", "", ()).ensure(_must_not_train) == "present"


def _properties(size: int, node_id: int, port: int) -> str:
    node = BrokerNode(node_id, port, port + 1, Path(f"/runs/x/kafka/node-{node_id}"))
    voters = ",".join(f"{n}@127.0.0.1:{port + 10 * n}" for n in range(1, size + 1))
    return broker_properties(node, voters, size)


def test_one_template_per_cluster_shape() -> None:
    key = storage_template.template_key("4.1.2", _properties(3, 1, 9000))
    assert key == storage_template.template_key("4.1.2", _properties(3, 2, 9100))
    assert key == storage_template.template_key("4.1.2", _properties(3, 3, 20000))
    assert key != storage_template.template_key("4.1.2", _properties(1, 1, 9000))
    assert key != storage_template.template_key("4.2.0", _properties(3, 1, 9000))
    shared = storage_template.shared_config(_properties(3, 1, 9000))
    assert "min.insync.replicas=2" in shared and "node.id" not in shared
    moved = storage_template.with_log_dir(_properties(1, 1, 9000), Path("/tmp/t"))
    assert moved.count("log.dirs=") == 1 and "log.dirs=/tmp/t\n" in moved


TEMPLATE_META = "#\n#Mon Nov 23 09:31:10 UTC 2026\nnode.id=1\ndirectory.id=AAAA\nversion=1\n" \
    "cluster.id=template-cluster\n"


def test_each_node_gets_its_own_ids() -> None:
    meta = storage_template.node_meta(TEMPLATE_META, "realCluster", 3, "dirId")
    lines = meta.splitlines()
    assert {"node.id=3", "directory.id=dirId", "cluster.id=realCluster", "version=1"} <= set(lines)
    assert "template-cluster" not in meta and "AAAA" not in meta
    with pytest.raises(ValueError, match=r"directory\.id"):
        storage_template.node_meta("version=1\nnode.id=1\ncluster.id=x\n", "c", 1, "d")


def test_kafka_uuids_are_distinct_and_well_formed() -> None:
    ids = {storage_template.random_kafka_uuid() for _ in range(500)}
    assert len(ids) == 500
    assert all(UUID_TEXT.match(i) for i in ids)


def _fake_format(extra: str | None = None) -> Callable[[Path], None]:
    def format_into(folder: Path) -> None:
        folder.mkdir()
        (folder / "meta.properties").write_text(TEMPLATE_META)
        (folder / "bootstrap.checkpoint").write_bytes(b"\x00records")
        if extra is not None:
            (folder / extra).write_text("?")
    return format_into


def test_template_is_formatted_once_then_copied(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    template = storage_template.ensure_template(templates, "k", _fake_format())
    assert template == templates / "k"
    again = storage_template.ensure_template(templates, "k", _must_not_format)
    assert again == template and os.listdir(templates) == ["k"]
    ids = set()
    for node_id in (1, 2, 3):
        data = tmp_path / f"node-{node_id}" / "data"
        storage_template.copy_template(template, data, "cluster", node_id)
        assert sorted(os.listdir(data)) == ["bootstrap.checkpoint", "meta.properties"]
        assert (data / "bootstrap.checkpoint").read_bytes() == b"\x00records"
        meta = dict(line.split("=", 1) for line in (data / "meta.properties").read_text()
                    .splitlines() if "=" in line)
        assert meta["node.id"] == str(node_id) and meta["cluster.id"] == "cluster"
        ids.add(meta["directory.id"])
    assert len(ids) == 3


def _must_not_format(folder: Path) -> None:
    raise AssertionError("formatted a template that was there")


def test_a_format_that_writes_something_else_is_no_template(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    found = storage_template.ensure_template(templates, "k", _fake_format("__cluster_metadata-0"))
    assert found is None and os.listdir(templates) == []


def test_a_cache_that_cannot_be_written_fails_no_start(tmp_path: Path) -> None:
    blocker = tmp_path / "cds"
    blocker.write_text("a file where the archive folder should be")
    archive = BrokerArchive(blocker / "broker.jsa", "java", "", ())
    assert archive.ensure(_must_not_train).startswith("failed: ")
    assert archive.flags_to_use() == []


def test_the_trainer_removes_what_a_killed_trainer_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "broker.jsa"
    stale = jvm_archive.temporary_name(path)
    stale.write_bytes(b"half an archive")
    other = tmp_path / "other.jsa.tmp-1-abcd"
    other.write_bytes(b"another archive's")

    def train(temporary: Path) -> None:
        assert not stale.exists()
        temporary.write_bytes(b"a whole archive")

    # The JVM that maps a real archive is the integration test's part.
    monkeypatch.setattr(jvm_archive, "maps_archive", lambda *_: lambda _: True)
    archive = BrokerArchive(path, "java", "", ())
    assert archive.ensure(train) == "trained"
    assert path.read_bytes() == b"a whole archive" and jvm_archive.is_usable(path)
    assert other.exists()
