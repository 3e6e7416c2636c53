"""At-least-once, a pod paused past its session while another pod takes its task over
(issue 33: `all`, seed 4, at_least_once, lost-history 316). Nothing fences a zombie
without transactions: when the paused pod runs again it still holds the task's records it
had fetched, and, before anything tells it that it left the group, it processed them
against its stale store and sent their balance records to the changelog, after the newer
ones of the pod that had taken over. Even a pod that processes nothing more sends on
resume what its producer still held (linger). The next pod that restored that changelog
took those stale balances as the latest and every later event of their accounts came out
short: lost history.

On a real broker: pod-a is paused while it works through a burst, pod-b takes the task
over and gets ahead of where pod-a stopped, pod-a runs again, both stop, and pod-c
restores the changelog from the beginning and processes a few more events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import wait_until
from kafka import KafkaConsumer, TopicPartition
from worker_io import inputs, outputs, read_all, verdict

from workloads.ledger.contract import BALANCE_STORE, Balance, account_name, changelog_topic

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(6)]
BURST = 1500


def _has_output(bootstrap: str, topic: str, event_id: str) -> bool:
    c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                      auto_offset_reset="earliest")
    try:
        tp = TopicPartition(topic, 0)
        c.assign([tp])
        end = c.end_offsets([tp])[tp]
        # the newest outputs are enough: every output is newer than the burst's middle
        c.seek(tp, max(0, end - 200))
        while (c.position(tp) or 0) < end:
            for recs in c.poll(timeout_ms=500).values():
                if any(json.loads(r.value)["event_id"] == event_id for r in recs):
                    return True
        return False
    finally:
        c.close()


def _backwards(bootstrap: str, app: str) -> list[dict[str, Any]]:
    """Balance records that land after a newer one of their account (by the input offset
    of the last event applied): what a restore must not take as the latest."""
    newest: dict[str, int] = {}
    found = []
    for r in read_all(bootstrap, changelog_topic(app, BALANCE_STORE)):
        key, offset = r.key.decode(), Balance.decode(r.value.decode()).offset
        if offset < newest.get(key, -1):
            found.append({"changelog_offset": r.offset, "account": key,
                          "applied_through": offset, "newest_before": newest[key]})
        newest[key] = max(offset, newest.get(key, -1))
    return found


def test_a_pod_paused_past_its_session_leaves_no_stale_balance_for_a_restore(
    kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    a = pods(t, "pod-a", guarantee="at_least_once").start()
    a.wait_running()
    # Paused mid-burst: pod-a holds fetched records it has not processed yet.
    with a.paused_mid_burst(prod, ACCOUNTS, BURST):
        b = pods(t, "pod-b", guarantee="at_least_once").start()
        b.wait_for(lambda e: e["event"] == "task-running", 90, "pod-b running the task")
        wait_until(lambda: _has_output(kafka_bootstrap, t.output, f"burst-{BURST - 1}"), 120,
                   "pod-b through the burst")
        # pod-b gets ahead of everything pod-a had fetched
        later = prod.events(ACCOUNTS, 60, prefix="later")
        wait_until(lambda: _has_output(kafka_bootstrap, t.output, later[-1].event_id), 90,
                   "pod-b's later outputs")
        seen = len(a.events())
    # pod-a runs again, finds out it left the group and joins again (or dies trying)
    wait_until(lambda: not a.alive() or any(
        e["event"] in ("assigned", "task-migrated", "fatal") for e in a.events()[seen:]
    ), 60, "pod-a back in the group")
    if a.alive():
        a.stop()
    b.stop()
    stale = _backwards(kafka_bootstrap, t.app)

    c = pods(t, "pod-c", guarantee="at_least_once").start()  # empty state: restores all
    c.wait_running()
    final = prod.events(ACCOUNTS, 30, prefix="final")
    wait_until(lambda: _has_output(kafka_bootstrap, t.output, final[-1].event_id), 90,
               "pod-c's outputs")
    c.stop()

    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    # at-least-once may repeat an output; every event's first output must be exact
    assert not v.missing and not v.wrong_balance, (
        f"missing {v.missing[:5]}, wrong balances (id, got, want) {v.wrong_balance[:5]}; "
        f"stale balance records in the changelog: {stale[:5]}"
    )
