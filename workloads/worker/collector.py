"""The record collector of a stream thread: every output and changelog record goes through
the thread's producer here, and the offsets the changelog records landed at are collected
so tasks can checkpoint them after a successful commit (Kafka Streams' RecordCollector)."""

from __future__ import annotations

from kafka import KafkaProducer
from kafka.producer.future import FutureRecordMetadata


class RecordCollector:
    def __init__(self, producer: KafkaProducer) -> None:
        self.producer = producer
        # Sends to one partition from one producer are ordered, so the last future per
        # partition carries that partition's highest offset.
        self._last: dict[tuple[str, int], FutureRecordMetadata] = {}
        self.count = 0

    def send(self, topic: str, key: str, value: bytes | str, partition: int | None) -> None:
        raw = value.encode() if isinstance(value, str) else value
        fut = self.producer.send(topic, key=key.encode(), value=raw, partition=partition)
        if partition is not None:
            self._last[(topic, partition)] = fut
        self.count += 1

    def take_offsets(self) -> dict[tuple[str, int], int]:
        """After a flush/commit: {(topic, partition): offset of the last record sent}."""
        out = {tp: fut.get(timeout=30).offset for tp, fut in self._last.items()}
        self._last.clear()
        self.count = 0
        return out

    def discard(self) -> None:
        """After an abort: nothing sent since the last commit is in the log."""
        self._last.clear()
        self.count = 0
