"""A producer closed dirty does not wait for what it holds (Kafka Streams' close(Duration.ZERO)
when it resets a producer it could not abort).

Found in CI: a paused thread under exactly-once came back to a producer stuck bumping its
epoch; closing it to start a new one flushed first, the flush timed out, and the thread
died of the KafkaTimeoutError instead of rejoining (test_task_migrated_rejoin.py). Here a
batch held back by linger stands for what such a producer cannot send."""

from __future__ import annotations

import kafka.errors as Errors
import pytest
from kafka import KafkaProducer

from workloads.worker.clients import close_at_once

pytestmark = pytest.mark.kafka
HELD_MS = 120_000  # the batch waits this long for company: it is pending at the close


def _holding(kafka_bootstrap: str, topic: str) -> tuple[KafkaProducer, object]:
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap, linger_ms=HELD_MS,
                             delivery_timeout_ms=2 * HELD_MS)
    return producer, producer.send(topic, b"held")


def test_a_plain_close_flushes_and_fails_on_a_pending_batch(kafka_bootstrap, topics_factory):
    """What close_at_once avoids: kafka-python's close waits for the batch and raises."""
    producer, _ = _holding(kafka_bootstrap, topics_factory(1).output)
    with pytest.raises(Errors.KafkaTimeoutError):
        producer.close(timeout=0)
    close_at_once(producer)  # leaves nothing running


def test_close_at_once_drops_the_pending_batch_and_stops_the_sender(kafka_bootstrap,
                                                                     topics_factory):
    producer, pending = _holding(kafka_bootstrap, topics_factory(1).output)
    close_at_once(producer)
    assert not producer._sender.is_alive()
    assert pending.is_done and pending.failed()  # type: ignore[attr-defined]
