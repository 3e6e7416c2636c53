"""Reading a topic back from its start to its end, as the broker tests check what they
wrote (a helper module, not a test)."""

from __future__ import annotations

from kafka import KafkaConsumer, TopicPartition


def read_topic(bootstrap: str, topic: str, partitions: int = 1,
               committed: bool = False) -> list[bytes]:
    """Every value in `topic` up to its end now; with `committed`, only those of committed
    transactions (read_committed)."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        isolation_level="read_committed" if committed else "read_uncommitted",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        values: list[bytes] = []
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            for records in consumer.poll(timeout_ms=500).values():
                values.extend(r.value for r in records)
        return values
    finally:
        consumer.close()
