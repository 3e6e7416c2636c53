"""A broker of another Kafka release than the pin, started by the harness's cluster: 3.9.1,
the last 3.x, takes a record and gives it back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from harness.kafka.cluster import CLUSTER_FILE, KafkaCluster
from harness.procs import ProcessRegistry

pytestmark = pytest.mark.kafka

VERSION = "3.9.1"


def test_a_3_9_broker_produces_and_consumes_one_record(tmp_path: Path) -> None:
    registry = ProcessRegistry(tmp_path)
    cluster = KafkaCluster(tmp_path, registry, size=1, version=VERSION)
    try:
        cluster.start()
        assert json.loads((tmp_path / CLUSTER_FILE).read_text())["version"] == VERSION
        log = (tmp_path / "kafka" / "broker-1.log").read_text()
        assert f"Kafka version: {VERSION}" in log  # the broker says which release it is
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        try:
            admin.create_topics([NewTopic("one-record", 1, 1)])
        finally:
            admin.close()
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
        try:
            producer.send("one-record", key=b"k", value=b"v").get(timeout=30)
        finally:
            producer.close()
        consumer = KafkaConsumer("one-record", bootstrap_servers=cluster.bootstrap,
                                 auto_offset_reset="earliest", consumer_timeout_ms=15000)
        try:
            got = [(r.key, r.value) for r in consumer]
        finally:
            consumer.close()
        assert got == [(b"k", b"v")]
    finally:
        registry.stop_all()
