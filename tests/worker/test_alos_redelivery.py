"""At-least-once, the crash between a dedup entry's changelog record and its output: the
restart restores the entry and meets the same input record again. The fixed ledger
re-emits the output the entry remembers; skipping it, as it did before, lost the event.

The window is held open on a real broker: the output topic is missing when the worker
starts (the test broker creates no topic by itself), so the first event's changelog
records land and its output send waits for the topic's metadata; nothing is committed.
Then SIGKILL, the output topic created, and a restart."""

from __future__ import annotations

import uuid

import pytest
from conftest import wait_until
from kafka import KafkaAdminClient, KafkaConsumer, TopicPartition
from worker_io import create_topics, inputs, outputs, verdict

from workloads.ledger.contract import STORES, account_name, changelog_topic

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(8)]
EVENTS = 50


def _log_end(bootstrap: str, topic: str) -> int:
    c = KafkaConsumer(bootstrap_servers=bootstrap)
    try:
        return sum(c.end_offsets([TopicPartition(topic, 0)]).values())
    finally:
        c.close()


def _output_topic(bootstrap: str, topic: str, create: bool) -> None:
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        if create:
            from kafka.admin import NewTopic

            admin.create_topics([NewTopic(topic, 1, 1)])
        else:
            admin.delete_topics([topic])
        wait_until(lambda: (topic in admin.list_topics()) == create, 30, f"{topic} {create}")
    finally:
        admin.close()


def test_redelivery_after_a_lost_output_re_emits_it(kafka_bootstrap, producer_factory, pods):
    t = create_topics(kafka_bootstrap, f"w{uuid.uuid4().hex[:8]}", 1)
    _output_topic(kafka_bootstrap, t.output, create=False)
    prod = producer_factory(t)
    pod = pods(t, "pod-a", guarantee="at_least_once").start()
    pod.wait_running()
    prod.events(ACCOUNTS, EVENTS)
    # The window: the first event's dedup entry and balance are in their changelogs, its
    # output is not. (Which subsets of the two records a kill can keep is the pure
    # processor's business: tests/worker/test_processor.py tries them all.)
    for store in STORES:
        topic = changelog_topic(t.app, store)
        wait_until(lambda topic=topic: _log_end(kafka_bootstrap, topic) >= 1, 60,
                   f"the first event's record in {topic}")
    pod.kill()
    _output_topic(kafka_bootstrap, t.output, create=True)
    again = pods(t, "pod-a", guarantee="at_least_once").start()
    again.wait_running()
    last = f"e-{EVENTS - 1}"
    wait_until(lambda: any(o.event_id == last for o in outputs(kafka_bootstrap, t)), 90,
               "the last event's output")
    events = again.events(since_start=True)
    reemits = [(e["event_id"], e["offset"]) for e in events if e["event"] == "dedup-reemit"]
    skips = [e for e in events if e["event"] == "dedup-skip"]
    assert reemits == [("e-0", 0)] and not skips  # the restored entry met its own record
    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    assert v.valid, (v.missing[:5], v.duplicates[:5], v.wrong_balance[:5])
