"""The broker kchaos starts honours the guarantees the worker and checker rely on."""

from __future__ import annotations

import uuid

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata
from topic_reads import read_topic

pytestmark = pytest.mark.kafka


def _topic(admin_bootstrap: str, partitions: int = 1) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=admin_bootstrap)
    try:
        admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        admin.close()
    return name


def test_create_topics_lists_them(kafka_bootstrap: str) -> None:
    topic = _topic(kafka_bootstrap, partitions=3)
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        assert topic in admin.list_topics()
        (described,) = admin.describe_topics([topic])
        assert len(described["partitions"]) == 3
    finally:
        admin.close()


def test_idempotent_producer_writes_each_record_once(kafka_bootstrap: str) -> None:
    topic = _topic(kafka_bootstrap)
    producer = KafkaProducer(
        bootstrap_servers=kafka_bootstrap, enable_idempotence=True, acks="all"
    )
    try:
        for i in range(100):
            producer.send(topic, f"v{i}".encode())
        producer.flush()
    finally:
        producer.close()
    values = read_topic(kafka_bootstrap, topic, committed=True)
    assert values == [f"v{i}".encode() for i in range(100)]


def test_aborted_transaction_is_invisible_and_committed_one_visible(kafka_bootstrap: str) -> None:
    topic = _topic(kafka_bootstrap)
    producer = KafkaProducer(
        bootstrap_servers=kafka_bootstrap, transactional_id=f"tx-{uuid.uuid4().hex[:6]}"
    )
    try:
        producer.init_transactions()
        producer.begin_transaction()
        producer.send(topic, b"aborted")
        producer.flush()
        producer.abort_transaction()
        producer.begin_transaction()
        producer.send(topic, b"committed")
        producer.commit_transaction()
    finally:
        producer.close()
    assert read_topic(kafka_bootstrap, topic, committed=True) == [b"committed"]


def test_offsets_sent_to_transaction_move_only_on_commit(kafka_bootstrap: str) -> None:
    source, sink = _topic(kafka_bootstrap), _topic(kafka_bootstrap)
    group = f"g-{uuid.uuid4().hex[:6]}"
    seed = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for i in range(10):
        seed.send(source, str(i).encode())
    seed.flush()
    seed.close()

    consumer = KafkaConsumer(
        source,
        bootstrap_servers=kafka_bootstrap,
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",
    )
    producer = KafkaProducer(
        bootstrap_servers=kafka_bootstrap, transactional_id=f"tx-{uuid.uuid4().hex[:6]}"
    )
    tp = TopicPartition(source, 0)
    try:
        consumed = []
        while len(consumed) < 10:
            for records in consumer.poll(timeout_ms=500).values():
                consumed.extend(records)
        producer.init_transactions()

        producer.begin_transaction()
        producer.send(sink, b"x")
        producer.send_offsets_to_transaction(
            {tp: OffsetAndMetadata(5, "", -1)}, consumer.group_metadata()
        )
        producer.abort_transaction()
        assert consumer.committed(tp) is None

        producer.begin_transaction()
        producer.send(sink, b"y")
        producer.send_offsets_to_transaction(
            {tp: OffsetAndMetadata(10, "", -1)}, consumer.group_metadata()
        )
        producer.commit_transaction()
        assert consumer.committed(tp) == 10
    finally:
        producer.close()
        consumer.close()
    assert read_topic(kafka_bootstrap, sink, committed=True) == [b"y"]
