"""The drain against a real broker: it ends when the group's committed offsets reach the
input's end and the pods have settled, and ends undrained when nobody is left."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from harness.run import topics
from harness.run.topics import wait_drained

pytestmark = pytest.mark.kafka


@pytest.fixture
def input_topic(kafka_bootstrap: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh one-partition input topic with one record, as the drain's input."""
    name = f"input-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        admin.create_topics([NewTopic(name, 1, 1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    producer.send(name, b"event").get(timeout=30)
    producer.close()
    monkeypatch.setattr(topics, "INPUT_TOPIC", name)
    yield name


def commit_end(bootstrap: str, group: str, topic: str) -> None:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group,
                             enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        end = consumer.end_offsets([tp])[tp]
        consumer.commit({tp: OffsetAndMetadata(end, None, -1)})
    finally:
        consumer.close()


class Polls:
    """A predicate that turns true from its `turns_at`-th call on, counting its calls."""

    def __init__(self, turns_at: int) -> None:
        self.turns_at, self.calls = turns_at, 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.turns_at


def test_a_consumed_input_drains_once_the_pods_have_settled(
    kafka_bootstrap: str, input_topic: str
) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    commit_end(kafka_bootstrap, group, input_topic)
    settled = Polls(turns_at=10)
    drained, _ = wait_drained(kafka_bootstrap, group, timeout_s=60, stable_s=0.0,
                              settled=settled)
    assert drained and settled.calls == 10


def test_a_lagging_group_is_not_drained_however_settled(
    kafka_bootstrap: str, input_topic: str
) -> None:
    drained, _ = wait_drained(kafka_bootstrap, f"g-{uuid.uuid4().hex[:8]}", timeout_s=2)
    assert not drained


def test_giving_up_ends_the_drain_undrained_at_once(
    kafka_bootstrap: str, input_topic: str
) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    give_up = Polls(turns_at=3)
    drained, _ = wait_drained(kafka_bootstrap, group, timeout_s=60, give_up=give_up)
    assert not drained and give_up.calls == 3  # not polled on to the timeout
