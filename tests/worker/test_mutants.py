"""Some mutants beyond the seeds, each with a deterministic scenario: with the switch the
committed output shows the anomaly, without it the same scenario is correct."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import Pod, drain, wait_until
from kafka import KafkaConsumer, TopicPartition
from worker_io import Producer, Topics, inputs, outputs, verdict

from workloads.ledger.contract import Event, account_name

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(8)]
OPEN_TXN = ("--commit-interval-ms", "600000")  # the first transaction stays open


def killed_in_an_open_transaction(pods: Callable[..., Pod], topics: Topics, prod: Producer,
                                  bugs: tuple[str, ...], until: Callable[[Pod], object]) -> Pod:
    """pod-a processes 300 events in one transaction it does not commit (OPEN_TXN), is
    killed once `until(pod)` returns, and starts again with its commits as usual; 10 later
    events follow. The pod that started again."""
    pod = pods(topics, "pod-a", bugs=bugs, extra=OPEN_TXN).start()
    pod.wait_running()
    prod.events(ACCOUNTS, 300)
    until(pod)
    pod.kill()
    again = pods(topics, "pod-a", bugs=bugs).start()
    again.wait_running()
    prod.events(ACCOUNTS, 10, prefix="late")
    return again


def log_end(bootstrap: str, topic: str) -> int:
    c = KafkaConsumer(bootstrap_servers=bootstrap, isolation_level="read_uncommitted")
    try:
        return sum(c.end_offsets([TopicPartition(topic, 0)]).values())
    finally:
        c.close()


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "offsets-outside-txn"])
def test_offsets_outside_transaction_lose_events(
    bug, kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition

    def sent(pod: Pod) -> None:
        pod.wait_for(lambda e: e["event"] == "txn-begin", what="open transaction")
        if bug:  # the consumed offsets are durable before the transaction commits
            pod.wait_for(lambda e: e["event"] == "commit" and e["offsets"].get("0") == 300)
        else:
            wait_until(lambda: log_end(kafka_bootstrap, t.output) >= 300, 60, "sent output")

    killed_in_an_open_transaction(pods, t, prod, ("offsets-outside-txn",) if bug else (), sent)
    if bug:
        drain(kafka_bootstrap, t, 10)
        v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
        assert len(v.missing) == 300  # lost-event: aborted output, offsets already committed
    else:
        drain(kafka_bootstrap, t, 310)
        assert verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t)).valid


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "restore-read-uncommitted"])
def test_restore_read_uncommitted_remembers_aborted_events(
    bug, kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition

    def in_the_changelog(_: Pod) -> None:
        """The open transaction's changelog records are in the log, not yet committed."""
        wait_until(lambda: log_end(kafka_bootstrap, f"{t.app}-dedup-changelog") >= 300, 60,
                   "uncommitted changelog records")

    again = killed_in_an_open_transaction(
        pods, t, prod, ("restore-read-uncommitted",) if bug else (), in_the_changelog)
    drain(kafka_bootstrap, t, 10)
    skipped = [e for e in again.events(since_start=True) if e["event"] == "dedup-skip"]
    if bug:
        assert len(skipped) == 300  # dedup-skip: restored from aborted changelog records
        v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
        # no output for them; later balances include their amounts (over-count relative
        # to the committed outputs, which is what the checker sums)
        assert len(v.missing) == 300
    else:
        drain(kafka_bootstrap, t, 310)
        assert not skipped
        assert verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t)).valid


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "dedup-not-logged"])
def test_dedup_not_logged_duplicates_after_wipe(
    bug, kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    bugs = ("dedup-not-logged",) if bug else ()
    first = prod.events(ACCOUNTS, 50)
    pod = pods(t, "pod-a", bugs=bugs).start()
    drain(kafka_bootstrap, t, 50)
    pod.restart_after_kill()  # EOS: no checkpoint -> wipe and restore on restart
    prod.send([Event(e.event_id, e.account, e.amount) for e in first[:5]])  # re-sends
    prod.events(ACCOUNTS, 5, prefix="late")
    drain(kafka_bootstrap, t, 55)
    wait_until(lambda: pod.wait_for(lambda e: e["event"] == "txn-commit"), 30, "commit")
    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    if bug:
        assert len(v.duplicates) == 5  # duplicate-output after the wipe
    else:
        wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= 55, 30, "outputs")
        assert v.valid and len(outputs(kafka_bootstrap, t)) == 55
