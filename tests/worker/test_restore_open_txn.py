"""A restore under exactly-once reads to the log's end, past a transaction a crashed
producer left open, against a real broker (KAFKA-10167's rule).

Found by `all` seed 20: a pod killed inside a transaction left it open for the drawn 60 s
transaction timeout; the task's next owner committed past it, and the owner after that
restored only to the pinned last stable offset, then ran on a store missing the records
in between (lost-history 374 on the fixed worker).
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.consumer.fetcher import ConsumerRecord

from workloads.worker.config import parse_args
from workloads.worker.restore import ChangelogReader
from workloads.worker.trace import Tracer

pytestmark = pytest.mark.kafka


def _txn_producer(bootstrap: str, txn_id: str) -> KafkaProducer:
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
    producer.init_transactions()
    return producer


def _poll(reader: ChangelogReader, tp: TopicPartition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        reader.poll(timeout_ms=200)
        if tp in reader.completed:
            return True
    return False


def test_restore_waits_out_an_open_transaction_below_committed_records(
        kafka_bootstrap: str, tmp_path: Path) -> None:
    topic = f"changelog-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    admin.create_topics([NewTopic(topic, 1, 1)])
    admin.close()
    tp = TopicPartition(topic, 0)
    crashed_id = f"crashed-{uuid.uuid4().hex[:6]}"
    crashed = _txn_producer(kafka_bootstrap, crashed_id)
    crashed.begin_transaction()
    crashed.send(topic, b"never-committed")
    crashed.flush()  # and the producer "dies": its transaction stays open
    owner = _txn_producer(kafka_bootstrap, f"owner-{uuid.uuid4().hex[:6]}")
    owner.begin_transaction()
    for i in range(3):
        owner.send(topic, f"committed-{i}".encode())
    owner.commit_transaction()
    owner.close()

    cfg = parse_args(["--bootstrap", kafka_bootstrap, "--state-dir", str(tmp_path / "state")])
    reader = ChangelogReader(cfg, Tracer(None, "pod-t"), "StreamThread-1")
    applied: list[bytes] = []

    def apply(records: list[ConsumerRecord]) -> None:
        applied.extend(r.value for r in records)

    try:
        reader.register("0_0", "balances", tp, 0, apply, active=True)
        # Stopping at the last stable offset (0) would complete at once, with nothing.
        assert not _poll(reader, tp, 3.0)
        # The crashed producer's successor fences it: the broker aborts its transaction.
        _txn_producer(kafka_bootstrap, crashed_id).close()
        assert _poll(reader, tp, 30.0)
        assert applied == [f"committed-{i}".encode() for i in range(3)]
    finally:
        reader.close()
        crashed.close(timeout=0)
