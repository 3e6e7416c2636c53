"""The drain against a real broker: it ends when the group's committed offsets reach the
input's end and the pods have settled, and ends undrained when nobody is left."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.structs import OffsetAndMetadata

from harness.run import topics
from harness.run.drain import wait_drained

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
    drain = wait_drained(kafka_bootstrap, group, timeout_s=60, stable_s=0.0, settled=settled)
    assert drain.drained and settled.calls == 10 and drain.verdict == "drained"


def test_a_lagging_group_is_not_drained_however_settled(
    kafka_bootstrap: str, input_topic: str
) -> None:
    drain = wait_drained(kafka_bootstrap, f"g-{uuid.uuid4().hex[:8]}", timeout_s=2)
    assert not drain.drained and drain.verdict == "stalled"
    assert drain.lag_at_budget == drain.last_lag == 1


def test_giving_up_ends_the_drain_undrained_at_once(
    kafka_bootstrap: str, input_topic: str
) -> None:
    group = f"g-{uuid.uuid4().hex[:8]}"
    give_up = Polls(turns_at=3)
    drain = wait_drained(kafka_bootstrap, group, timeout_s=60, give_up=give_up)
    assert not drain.drained and give_up.calls == 3  # not polled on to the timeout
    assert drain.verdict == "stalled"


def test_a_group_still_catching_up_at_the_budget_drains_slow(
    kafka_bootstrap: str, input_topic: str
) -> None:
    """Past its budget the drain waits while the lag falls: a consumer that commits one
    record at a time, slower than the budget, ends drained and said to be slow."""
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap)
    for _ in range(5):
        producer.send(input_topic, b"event")
    producer.flush()
    producer.close()
    group = f"g-{uuid.uuid4().hex[:8]}"
    stop = threading.Event()

    def commit_one_at_a_time() -> None:
        consumer = KafkaConsumer(bootstrap_servers=kafka_bootstrap, group_id=group,
                                 enable_auto_commit=False)
        try:
            for offset in range(1, 7):
                if stop.wait(0.8):
                    return
                consumer.commit({TopicPartition(input_topic, 0):
                                 OffsetAndMetadata(offset, None, -1)})
        finally:
            consumer.close()

    committer = threading.Thread(target=commit_one_at_a_time)
    committer.start()
    try:
        drain = wait_drained(kafka_bootstrap, group, timeout_s=1.5, stable_s=0.0)
    finally:
        stop.set()
        committer.join()
    assert drain.drained and drain.verdict == "slow", drain
    assert drain.lag_at_budget is not None and drain.lag_at_budget > 0
