"""The run's topics and the admin calls the run and the nemesis make on them."""

from __future__ import annotations

import contextlib
import time

from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAlreadyExistsError

from common.waiting import wait_until
from workloads.ledger.contract import ACCOUNTS_TOPIC, INPUT_TOPIC, OUTPUT_TOPIC


def create_topics(bootstrap: str, partitions: int, replication: int) -> None:
    """Input and output with `partitions`; the accounts topic compacted, one partition."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        topics = [
            NewTopic(INPUT_TOPIC, partitions, replication),
            NewTopic(OUTPUT_TOPIC, partitions, replication),
            # compact,delete with no time/size limit: compacted like a global table, yet
            # Kafka 4 allows DeleteRecords on it (truncate-global) only with "delete" in it.
            NewTopic(ACCOUNTS_TOPIC, 1, replication, topic_configs={
                "cleanup.policy": "compact,delete", "retention.ms": "-1",
                "retention.bytes": "-1"}),
        ]
        for topic in topics:
            with contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([topic])
    finally:
        admin.close()


def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        partitions = consumer.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        return {tp.partition: offset for tp, offset in consumer.end_offsets(tps).items()}
    finally:
        consumer.close()


def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int]:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        offsets = admin.list_group_offsets(group).get(group, {})
        return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == topic}
    finally:
        admin.close()


def delete_records_before(bootstrap: str, topic: str, partition: int, offset: int) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        admin.delete_records({TopicPartition(topic, partition): offset})
    finally:
        admin.close()


def lag(bootstrap: str, group: str) -> int | None:
    """Input records not yet committed by the group (None if the cluster did not answer)."""
    try:
        ends = end_offsets(bootstrap, INPUT_TOPIC)
        committed = committed_offsets(bootstrap, group, INPUT_TOPIC)
    except Exception:
        return None
    return sum(max(0, end - committed.get(p, 0)) for p, end in ends.items())


def wait_drained(
    bootstrap: str, group: str, timeout_s: float, stable_s: float = 3.0
) -> tuple[bool, float]:
    """Until the group's committed offsets equal the input end offsets and stay so for
    `stable_s`; returns (drained, seconds waited)."""
    started = time.monotonic()
    stable_since: float | None = None

    def drained() -> bool:
        nonlocal stable_since
        remaining = lag(bootstrap, group)
        now = time.monotonic()
        if remaining != 0:
            stable_since = None
            return False
        stable_since = stable_since if stable_since is not None else now
        return now - stable_since >= stable_s

    done = wait_until(drained, timeout_s)
    return done, round(time.monotonic() - started, 2)
