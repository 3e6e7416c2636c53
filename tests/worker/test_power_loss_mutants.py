"""The mutants only a machine crash exposes, on the fault filesystem: each switch's
scenario ends in the anomaly, and the fixed worker runs the same scenario correctly.

The pod's state.dir is a fault filesystem mount; a power loss is SIGKILL, then the
filesystem drops what was not made durable and is mounted again (tests/faultfs)."""

from __future__ import annotations

import subprocess

import pytest
from conftest import Pod, wait_until
from worker_io import inputs, outputs, verdict

from tests.faultfs.mounting import fuse_missing, mount
from workloads.ledger.contract import account_name

pytestmark = [pytest.mark.kafka, pytest.mark.fuse, pytest.mark.needs("fusermount3")]
ACCOUNTS = [account_name(i) for i in range(8)]


@pytest.fixture
def on_faultfs(tmp_path):
    """Mounts a pod's state.dir on the fault filesystem; power_loss(pod) crashes it."""
    reason = fuse_missing()
    if reason:
        pytest.skip(reason)
    mounted = []

    def attach(pod: Pod):
        m = mount(pod.dir / "backing", pod.state_dir)
        mounted.append(m)
        return m

    def power_loss(pod: Pod) -> dict:
        pod.kill()
        m = mounted.pop()
        undone = m.power_loss()["undone"]
        mounted.append(mount(m.backing, m.mnt))
        return undone

    try:
        yield attach, power_loss
    finally:
        for m in mounted:
            if m.proc.poll() is None:
                m.proc.terminate()
                m.proc.wait(timeout=15)
            subprocess.run(["fusermount3", "-u", "-z", str(m.mnt)], capture_output=True)


def _sst_files(d) -> int:
    return len(list(d.glob("*.sst")))


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "checkpoint-delete-no-fsync"])
def test_checkpoint_deletion_undone_by_power_loss(
    bug, kafka_bootstrap, topics_factory, producer_factory, pods, on_faultfs
):
    attach, power_loss = on_faultfs
    t = topics_factory(1)
    prod = producer_factory(t)
    bugs = ("checkpoint-delete-no-fsync",) if bug else ()
    small = ("--write-buffer-bytes", "8192")
    first = pods(t, "pod-a", bugs=bugs, extra=small)
    attach(first)
    first.start().wait_running()
    prod.events(ACCOUNTS, 200)
    wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= 200, 90, "200 outputs")
    first.stop()  # a clean close: its checkpoint makes the next start restore a tail
    # Second incarnation: restores from a non-empty changelog, checkpoints, deletes that
    # checkpoint as it turns RUNNING, then keeps one long transaction open.
    second = pods(t, "pod-a", bugs=bugs, extra=(*small, "--commit-interval-ms", "600000"))
    second.start().wait_running()
    second.wait_for(lambda e: e["event"] == "checkpoint-delete" and e["reason"] == "eos-running",
                    what="checkpoint deleted at RUNNING")
    task_dir = second.app_dir / "0_0"
    flushed = _sst_files(task_dir / "dedup")
    sent = prod.events(ACCOUNTS, 3000, prefix="open")
    # A memtable flush persisted writes of the open transaction (RocksDB fsyncs its SST
    # files and directory): the machine crashes now.
    wait_until(lambda: _sst_files(task_dir / "dedup") >= flushed + 2, 60, "memtable flushes")
    assert not any(e["event"] == "txn-commit" for e in second.events(since_start=True))
    undone = power_loss(second)
    assert (task_dir / ".checkpoint").exists() == bug, undone  # the deletion was undone
    third = pods(t, "pod-a", bugs=bugs, extra=small)
    third.start().wait_running()
    drain = 200 + (1 if bug else len(sent))
    wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= drain, 120, f"{drain} outputs")
    mine = third.events(since_start=True)
    if bug:  # the resurrected checkpoint is trusted over a store holding aborted writes
        assert not any(e["event"] == "wipe" for e in mine)
        skipped = {e["event_id"] for e in third.events(since_start=True)
                   if e["event"] == "dedup-skip"}
        v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
        assert skipped and set(v.missing) >= skipped
    else:
        assert any(e["event"] == "wipe" and e.get("task") == "0_0" for e in mine)
        v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
        assert not any(e["event"] == "dedup-skip" for e in third.events(since_start=True))
        assert v.valid and v.processed == 3200


@pytest.mark.parametrize("bug", [False, True], ids=["fixed", "store-wal-no-sync"])
def test_unsynced_store_log_lost_by_power_loss(
    bug, kafka_bootstrap, topics_factory, producer_factory, pods, on_faultfs
):
    attach, power_loss = on_faultfs
    t = topics_factory(1)
    prod = producer_factory(t)
    bugs = ("store-wal-no-sync",) if bug else ()
    extra = ("--write-buffer-bytes", str(4 << 20))  # no flush by itself between commits
    first = pods(t, "pod-a", guarantee="at_least_once", bugs=bugs, extra=extra)
    attach(first)
    first.start().wait_running()
    prod.events(ACCOUNTS, 200)
    wait_until(lambda: len(outputs(kafka_bootstrap, t)) >= 200, 90, "200 outputs")
    # A checkpoint that claims all 200 changelog records: restoration after the crash then
    # replays nothing, and what the store lost stays lost (a shorter claim would let the
    # tail's records, one per account, repair the balances by chance).
    first.wait_for(lambda e: e["event"] == "checkpoint-write" and e["reason"] == "commit"
                   and min(e["offsets"].values(), default=-1) >= 199,
                   what="a checkpoint after the commit of every event")
    power_loss(first)
    again = pods(t, "pod-a", guarantee="at_least_once", bugs=bugs, extra=extra)
    again.start().wait_running()
    prod.events(ACCOUNTS, 40, prefix="late")

    def settled():
        outs = outputs(kafka_bootstrap, t)
        return len({o.event_id for o in outs if o.event_id.startswith("late")}) >= 40

    wait_until(settled, 120, "late outputs")
    v = verdict(inputs(kafka_bootstrap, t), outputs(kafka_bootstrap, t))
    if bug:  # the store lost what the unsynced log held; the checkpoint claimed it
        assert v.wrong_balance
    else:
        assert not v.wrong_balance and not v.missing, (v.missing[:5], v.wrong_balance[:5])
