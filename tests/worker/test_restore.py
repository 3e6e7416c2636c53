"""Restoration, checkpoints and crash recovery of the worker against a real broker."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import drain
from worker_io import inputs, outputs, verdict

from workloads.ledger.contract import STORES, account_name
from workloads.worker.checkpoint import read_checkpoint
from workloads.worker.store import KeyValueStore

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(8)]
SMALL_BUFFER = ("--write-buffer-bytes", "8192")


def store_contents(task_dir: Path) -> dict[str, dict[str, str]]:
    out = {}
    for s in STORES:
        kv = KeyValueStore(task_dir / s, 1 << 20)
        kv.open()
        out[s] = dict(kv.items())
        kv.close()
    return out


def ev(pod, name):  # events of one kind for task 0_0 since the pod's last start
    return [
        e for e in pod.events(since_start=True) if e["event"] == name and e.get("task") == "0_0"
    ]


def test_wiped_store_is_rebuilt_exactly(kafka_bootstrap, one_partition, pods):
    t, prod = one_partition
    prod.events(ACCOUNTS, 300)
    pod = pods(t, "pod-a", extra=SMALL_BUFFER).start()
    drain(kafka_bootstrap, t, 300)
    assert pod.stop() == 0
    before = store_contents(pod.app_dir / "0_0")
    assert len(before["dedup"]) == 300
    shutil.rmtree(pod.app_dir / "0_0")
    pod.start()
    pod.wait_running()
    starts = ev(pod, "restore-start")
    assert sorted(e["store"] for e in starts) == sorted(STORES)
    assert all(e["from_offset"] == 0 for e in starts)
    assert pod.stop() == 0
    assert store_contents(pod.app_dir / "0_0") == before


def test_clean_restart_resumes_from_checkpoint(
    kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    prod.events(ACCOUNTS, 200)
    pod = pods(t, "pod-a").start()
    drain(kafka_bootstrap, t, 200)
    assert pod.stop() == 0
    ckpt = read_checkpoint(pod.app_dir / "0_0" / ".checkpoint")
    assert ckpt and all(o > 0 for o in ckpt.values())
    pod.start()
    pod.wait_running()
    assert not ev(pod, "wipe")
    inits = {e["store"]: e for e in ev(pod, "task-init")}
    for (topic, _p), off in ckpt.items():
        store = next(s for s in STORES if topic.endswith(f"-{s}-changelog"))
        assert inits[store]["checkpoint"] == off
        start = next(e for e in ev(pod, "restore-start") if e["store"] == store)
        assert start["from_offset"] == off + 1  # the tail only, no full restore
    prod.events(ACCOUNTS, 100)
    drain(kafka_bootstrap, t, 300)
    assert verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t)).valid


def test_sigkill_under_eos_wipes_and_restores_fully(
    kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    prod.events(ACCOUNTS, 2000)
    pod = pods(t, "pod-a", extra=SMALL_BUFFER).start()
    drain(kafka_bootstrap, t, 2000)
    # the fixed worker keeps no checkpoint in a RUNNING exactly-once task directory
    assert not (pod.app_dir / "0_0" / ".checkpoint").exists()
    pod.restart_after_kill()
    assert not ev(pod, "checkpoint-read")
    wipes = ev(pod, "wipe")
    assert wipes and "EOS" in wipes[0]["reason"]  # flushed memtables made the store non-empty
    assert all(e["from_offset"] == 0 for e in ev(pod, "restore-start"))
    prod.events(ACCOUNTS, 100)
    drain(kafka_bootstrap, t, 2100)
    assert verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t)).valid


def test_sigkill_under_alos_restores_from_checkpoint(
    kafka_bootstrap, one_partition, pods
):
    t, prod = one_partition
    prod.events(ACCOUNTS, 500)
    pod = pods(t, "pod-a", guarantee="at_least_once").start()
    drain(kafka_bootstrap, t, 500)
    pod.wait_for(lambda e: e["event"] == "checkpoint-write" and e.get("reason") == "commit",
                 what="at-least-once checkpoint")
    pod.restart_after_kill()
    assert ev(pod, "checkpoint-read")
    assert not ev(pod, "wipe")
    assert all(e["from_offset"] > 0 for e in ev(pod, "restore-start"))
    prod.events(ACCOUNTS, 100)
    drain(kafka_bootstrap, t, 600)
    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    assert not v.missing and not v.wrong_balance  # at-least-once may only duplicate
