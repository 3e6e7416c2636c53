"""Offsets that a transaction failed to hand over (the group rebalanced: a stale generation)
must not reach a later transaction. kafka-python 3.0.12 keeps them in the producer's
pending offset commits after the abort and sends them with the next transaction's offsets:
the partition's committed offset jumps to where an aborted transaction had read, and the
records in between are never processed (found by the `all` profile: lost-event after a
zombie's commit failed). workloads/worker/clients.abort_transaction drops them."""

from __future__ import annotations

import kafka.errors as Errors
import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import ConsumerGroupMetadata, OffsetAndMetadata

from workloads.worker import clients

pytestmark = pytest.mark.kafka


def test_offsets_of_an_aborted_transaction_do_not_leak_into_the_next(
    kafka_bootstrap: str, topics_factory,
) -> None:
    t = topics_factory(2)
    group = f"{t.app}-group"
    consumer = KafkaConsumer(t.input, bootstrap_servers=kafka_bootstrap, group_id=group,
                             enable_auto_commit=False)
    producer = KafkaProducer(bootstrap_servers=kafka_bootstrap,
                             transactional_id=f"{t.app}-txn")
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        while not consumer.assignment():
            consumer.poll(timeout_ms=500)
        meta = consumer.group_metadata()
        stale = ConsumerGroupMetadata(meta.group_id, meta.generation_id + 1, meta.member_id,
                                      meta.group_instance_id)
        p0, p1 = TopicPartition(t.input, 0), TopicPartition(t.input, 1)
        producer.init_transactions()

        producer.begin_transaction()
        with pytest.raises(Errors.CommitFailedError):
            clients.send_offsets_to_transaction(
                producer, {p0: OffsetAndMetadata(578, "", -1)}, stale)
        clients.abort_transaction(producer)

        producer.begin_transaction()
        clients.send_offsets_to_transaction(producer, {p1: OffsetAndMetadata(5, "", -1)}, meta)
        clients.commit_transaction(producer)

        committed = admin.list_group_offsets(group)[group]
        assert committed[p1].offset == 5
        assert p0 not in committed or committed[p0].offset in (None, -1), committed[p0]
    finally:
        consumer.close()
        producer.close(timeout=10)
        admin.close()
