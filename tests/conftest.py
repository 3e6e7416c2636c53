"""Shared fixtures: one real Kafka broker per test session, started and stopped here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.kafka.cluster import KafkaCluster
from harness.procs import ProcessRegistry


@pytest.fixture(scope="session")
def kafka_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaCluster]:
    """A single-node KRaft cluster on 127.0.0.1 for the whole session."""
    run_dir: Path = tmp_path_factory.mktemp("kafka-session")
    registry = ProcessRegistry(run_dir)
    cluster = KafkaCluster(run_dir, registry, size=1)
    try:
        cluster.start()
        yield cluster
    finally:
        registry.stop_all()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_cluster: KafkaCluster) -> str:
    return kafka_cluster.bootstrap
