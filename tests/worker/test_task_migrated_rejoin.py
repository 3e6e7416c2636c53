"""A stream thread whose pod was paused past its session survives the takeover and rejoins
(Kafka Streams' TaskMigratedException: close the tasks dirty, rejoin the group).

Found on the fixed worker after issue 33: when the paused pod ran again, its first commit
failed (CommitFailedError, an unknown member: the group had given its task to another
pod) and the thread died in `_rewind` with `ValueError: Unassigned partition`. It had
kept the assignment it held before the commit failed as the one to apply, and the next
poll, rejoining, had dropped those partitions (kafka-python's on_partitions_lost). The
restart policy brought the pod back, so no run judged an anomaly, but a thread must not
die of a migration.

On a real broker: pod-a is paused while it works through a burst (it holds processed,
uncommitted records), pod-b takes the task over, pod-a runs again. Under exactly-once the
same path recreated the tasks it held without rejoining (it died too when the rejoin
dropped the partitions first); seen: it restored and ran the task the group had given to
pod-b until its next commit failed as well."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Pod, wait_until

from workloads.ledger.contract import account_name

pytestmark = pytest.mark.kafka
ACCOUNTS = [account_name(i) for i in range(6)]
BURST = 4000  # long enough that pod-a is paused mid-burst
# Processed records wait this long for their commit: pod-a is paused with some (the commit
# that fails when it runs again), not between a commit and its next record.
COMMIT_INTERVAL = ("--commit-interval-ms", "2000")


def _rejoined(pod: Pod, since: int) -> bool:
    """Since trace line `since`: an assignment, then the client RUNNING again."""
    events = pod.events()[since:]
    assigned = [i for i, e in enumerate(events) if e["event"] == "assigned"]
    return bool(assigned) and any(
        e["event"] == "client-state" and e["to"] == "RUNNING" for e in events[assigned[0]:]
    )


def _assigned_without_rejoin(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Task migrations followed by an assignment the group did not make: the thread
    recreated its tasks with no rebalance in between (the client goes REBALANCING when
    the rejoining thread revokes or is assigned)."""
    found, migrated = [], None
    for e in events:
        if e["event"] == "task-migrated":
            migrated = e
        elif e["event"] == "client-state" and e["to"] == "REBALANCING":
            migrated = None
        elif e["event"] == "assigned" and migrated is not None:
            found.append(migrated)
            migrated = None
    return found


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once_v2"])
def test_a_thread_paused_past_its_session_rejoins_instead_of_dying(
    kafka_bootstrap, one_partition, pods, guarantee
):
    t, prod = one_partition
    a = pods(t, "pod-a", guarantee=guarantee, extra=COMMIT_INTERVAL).start()
    a.wait_running()
    with a.paused_mid_burst(prod, ACCOUNTS, BURST):
        b = pods(t, "pod-b", guarantee=guarantee).start()
        # the group dropped pod-a (its session expired) and gave its task to pod-b
        b.wait_for(lambda e: e["event"] == "task-running", 90, "pod-b running the task")
        seen = len(a.events())

    wait_until(lambda: not a.alive() or _rejoined(a, seen)
               or any(e["event"] == "fatal" for e in a.events()[seen:]),
               90, "pod-a back in the group, or dead")
    after = a.events()[seen:]
    fatal = [e for e in a.events(since_start=True) if e["event"] == "fatal"]
    tail = a.log.read_text()[-3000:]
    assert not fatal, f"pod-a's thread died after the takeover: {fatal}\n{tail}"
    assert a.alive(), f"pod-a exited ({a.proc.returncode})\n{tail}"
    assert _rejoined(a, seen), f"pod-a did not rejoin: {[e['event'] for e in after]}"
    assert not _assigned_without_rejoin(after), (
        f"pod-a recreated its tasks without rejoining: {[e['event'] for e in after]}")
    # Still a working member: a clean stop, exit 0.
    b.stop()
    assert a.stop() == 0, tail
