"""KAFKA-20685 (stale restoration checkpoint under EOS) and KIP-406 (global invalid
offset): each scenario is driven step by step by the test; with the switch the trace shows
the mechanism and the committed output the symptom, without it the same run is correct."""

from __future__ import annotations

import pytest
from conftest import drain, wait_until
from kafka import KafkaAdminClient, TopicPartition
from worker_io import inputs, outputs, verdict

from workloads.ledger.contract import account_name
from workloads.worker.checkpoint import read_checkpoint

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(8)]


def sst_files(d):
    return len(list(d.glob("*.sst")))


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "KAFKA-20685"])
def test_kafka_20685_stale_checkpoint_after_sigkill(
    bug, kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    bugs = ("KAFKA-20685",) if bug else ()
    small = ("--write-buffer-bytes", "8192")
    # 1. a normal run and a clean stop: the changelog is non-empty, a checkpoint exists
    prod.events(ACCOUNTS, 200)
    pod = pods(t, "pod-a", bugs=bugs, extra=small).start()
    drain(kafka_bootstrap, t, 200)
    assert pod.stop() == 0
    # 2. restart with commits far apart, so the next transaction stays open
    slow = pods(t, "pod-a", bugs=bugs, extra=(*small, "--commit-interval-ms", "600000"))
    slow.start()
    slow.wait_running()
    task_dir = slow.app_dir / "0_0"
    assert (task_dir / ".checkpoint").exists() is bug  # the restoration checkpoint is kept
    flushed = sst_files(task_dir / "dedup")
    sent = prod.events(ACCOUNTS, 3000, prefix="open")
    # 3. a memtable flush persisted writes of the open transaction: SIGKILL now
    wait_until(lambda: sst_files(task_dir / "dedup") >= flushed + 2, 60, "memtable flushes")
    slow.wait_for(lambda e: e["event"] == "txn-begin", what="open transaction")
    assert not any(e["event"] == "txn-commit" for e in slow.events(since_start=True))
    slow.kill()
    # 4. restart normally
    pod.start()
    pod.wait_running()
    mine = pod.events(since_start=True)
    drain(kafka_bootstrap, t, 200 + (1 if bug else len(sent)))
    wait_until(lambda: pod.wait_for(lambda e: e["event"] == "txn-commit") and True, 30, "commit")
    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    if bug:
        # mechanism: the stale checkpoint is trusted, nothing is wiped, only the tail replays
        assert any(e["event"] == "checkpoint-read" and e.get("task") == "0_0" for e in mine)
        assert not any(e["event"] == "wipe" for e in mine)
        # symptom: redelivered events skipped as seen: committed to the input, no output
        skipped = {
            e["event_id"] for e in pod.events(since_start=True) if e["event"] == "dedup-skip"
        }
        assert skipped and set(v.missing) >= skipped
    else:
        assert any(e["event"] == "wipe" and e.get("task") == "0_0" for e in mine)
        assert not any(e["event"] == "dedup-skip" for e in pod.events(since_start=True))
        drain(kafka_bootstrap, t, 200 + len(sent))
        v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
        assert v.valid and v.processed == 3200


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "KIP-406"])
def test_global_invalid_offset_rebuild_or_death(
    bug, kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    bugs = ("KIP-406",) if bug else ()
    for a in ACCOUNTS:
        prod.account(a, 1)
    prod.events(ACCOUNTS, 40)
    pod = pods(t, "pod-a", bugs=bugs).start()
    drain(kafka_bootstrap, t, 40)
    assert pod.stop() == 0
    gckpt = read_checkpoint(pod.app_dir / "global" / ".checkpoint")
    assert gckpt == {(t.accounts, 0): len(ACCOUNTS) - 1}
    # truncate-global: newer versions, then delete records past the pod's global checkpoint
    for a in ACCOUNTS:
        prod.account(a, 2)
    first_v3 = min(prod.account(a, 3) for a in ACCOUNTS)
    admin = KafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    try:
        admin.delete_records({TopicPartition(t.accounts, 0): first_v3})
    finally:
        admin.close()
    prod.events(ACCOUNTS, 40, prefix="after")
    pod.start()
    if bug:
        e = pod.wait_for(lambda e: e["event"] == "global-invalid-offset", what="invalid offset")
        assert e["action"] == "die" and e["offset"] == len(ACCOUNTS) - 1
        assert pod.proc.wait(60) != 0
        pod.start()  # and it keeps dying: unavailable
        assert pod.proc.wait(60) != 0
        assert len(outputs(kafka_bootstrap, t)) == 40
    else:
        e = pod.wait_for(lambda e: e["event"] == "global-invalid-offset", what="invalid offset")
        assert e["action"] == "wipe"
        pod.wait_for(lambda e: e["event"] == "global-restore-start" and e["from_offset"] == 0)
        drain(kafka_bootstrap, t, 80)
        outs = outputs(kafka_bootstrap, t)
        assert {o.global_version for o in outs if o.event_id.startswith("after")} == {3}
        assert verdict(inputs(kafka_bootstrap, t), outs).valid
        assert pod.alive()
