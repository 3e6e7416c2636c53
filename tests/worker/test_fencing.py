"""ProducerFenced is Kafka Streams' TaskMigrated while the pod is still the only owner of its
instance id (the transaction coordinator moved, an epoch was bumped); a newer incarnation
of the same pod fences this one for good."""

from __future__ import annotations

import pytest
from conftest import Pod, wait_until
from kafka import KafkaProducer
from worker_io import inputs, outputs, verdict

from workloads.ledger.contract import account_name

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(8)]


def fence_producer(bootstrap: str, app: str, pod: str) -> None:
    """Bump the epoch of the pod's transactional id from outside, as a coordinator failover
    can: the pod's producer is fenced, its group membership untouched."""
    p = KafkaProducer(bootstrap_servers=bootstrap,
                      transactional_id=f"{app}-{pod}-StreamThread-1")
    try:
        p.init_transactions()
    finally:
        p.close(timeout=10)


def test_a_fenced_producer_is_task_migrated_while_the_pod_is_a_member(
    kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    pod = pods(t, "pod-a").start()
    pod.wait_running()
    prod.events(ACCOUNTS, 100)
    wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= 100, 90, "first outputs")
    fence_producer(kafka_bootstrap, t.app, "pod-a")
    prod.events(ACCOUNTS, 100, prefix="after")
    e = pod.wait_for(lambda e: e["event"] == "task-migrated", what="task migrated")
    assert e["error"] == "ProducerFencedError"
    wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= 200, 90, "outputs after the fence")
    assert pod.alive()
    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    assert v.valid and v.processed == 200


def test_a_newer_incarnation_fences_the_old_process_for_good(
    kafka_bootstrap, one_partition, pods, tmp_path
):
    t, prod = one_partition
    old = pods(t, "pod-a").start()
    old.wait_running()
    prod.events(ACCOUNTS, 50)
    wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= 50, 90, "first outputs")
    # The same pod identity in another process (and folder): the old one is the zombie.
    new = Pod(kafka_bootstrap, t, tmp_path / "newer", "pod-a").start()
    try:
        prod.events(ACCOUNTS, 50, prefix="after")
        assert old.proc is not None and old.proc.wait(90) != 0
        fatal = [e for e in old.events(since_start=True) if e["event"] == "fatal"]
        assert fatal and any("newer incarnation" in e["error"] for e in fatal)
        wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= 100, 90, "outputs of the new one")
        assert new.alive()
        assert verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t)).valid
    finally:
        new.kill()
