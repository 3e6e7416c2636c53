"""Standby failover and KAFKA-7672 (a task back on the same thread, not restored)."""

from __future__ import annotations

import pytest
from conftest import drain
from worker_io import accounts_for_partitions, inputs, outputs, verdict

from workloads.ledger.contract import account_name

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(16)]


def is_(event, **kw):
    return lambda e: e["event"] == event and all(e.get(k) == v for k, v in kw.items())


def test_standby_copy_is_used_by_failover(kafka_bootstrap, one_partition, pods):
    t, prod = one_partition
    a = pods(t, "pod-a", standbys=1).start()
    a.wait_for(is_("task-running", task="0_0"), what="active on pod-a")
    b = pods(t, "pod-b", standbys=1).start()
    b.wait_for(is_("assigned", standby=["0_0"]), what="standby on pod-b")
    prod.events(ACCOUNTS, 300)
    drain(kafka_bootstrap, t, 300)
    b.wait_for(lambda e: e["event"] == "checkpoint-write" and e.get("reason") == "standby-commit"
               and min(e["offsets"].values(), default=0) >= 299, what="standby caught up")
    a.kill()
    init = b.wait_for(is_("task-init", task="0_0", kind="active", store="dedup"), what="failover")
    assert init["checkpoint"] is not None and init["entries"] == 300  # the standby's copy
    start = b.wait_for(is_("restore-start", task="0_0", store="dedup"))
    assert start["from_offset"] == init["checkpoint"] + 1  # only the tail is restored
    prod.events(ACCOUNTS, 50)
    drain(kafka_bootstrap, t, 350)
    assert verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t)).valid


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "KAFKA-7672"])
def test_kafka_7672_task_back_on_same_thread(
    bug, kafka_bootstrap, topics_factory, producer_factory, pods
):
    t = topics_factory(2)
    prod = producer_factory(t)
    p1 = accounts_for_partitions(16, 2)[1]
    bugs = ("KAFKA-7672",) if bug else ()
    cleaner = ("--cleaner-delay-ms", "1000", "--cleaner-interval-ms", "300")
    prod.events(ACCOUNTS, 100)
    a = pods(t, "pod-a", bugs=bugs, extra=cleaner).start()
    drain(kafka_bootstrap, t, 100)  # pod-a restored (completed) both tasks' changelogs
    b = pods(t, "pod-b", bugs=bugs).start()
    b.wait_for(is_("task-running", task="0_1"), what="0_1 moved to pod-b")
    prod.events(p1, 50, prefix="mid")
    drain(kafka_bootstrap, t, 150)
    # pod-a's copy of 0_1 is unlocked and old: the cleaner deletes it (no checkpoint left)
    a.wait_for(is_("cleaner-delete", task="0_1"), what="cleaner")
    mark = len(a.events(since_start=True))
    b.stop()  # static member: after the session timeout 0_1 returns to pod-a's thread
    a.wait_for(lambda e: e["event"] == "task-running" and e.get("task") == "0_1"
               and a.events(since_start=True).index(e) >= mark, what="0_1 back on pod-a")
    back = a.events(since_start=True)[mark:]
    init = next(e for e in back if e["event"] == "task-init" and e.get("task") == "0_1")
    assert init["checkpoint"] is None and init["entries"] == 0
    restored = [e for e in back if e["event"] == "restore-start" and e.get("task") == "0_1"]
    prod.events(p1, 20, prefix="late")
    drain(kafka_bootstrap, t, 170)
    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    if bug:
        assert not restored  # mechanism: RUNNING without reading the changelog
        assert v.wrong_balance and all(got < want for _i, got, want in v.wrong_balance)
        assert {i for i, _g, _w in v.wrong_balance} <= {f"late-{n}" for n in range(1000)}
    else:
        assert restored and all(e["from_offset"] == 0 for e in restored)
        assert v.valid
