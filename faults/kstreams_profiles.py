"""Profiles aimed at the seed bugs in the real Kafka Streams releases (`--sut kstreams`).

The targeted profiles of `faults.plan` were written for the Python worker, which traces
more than Kafka Streams tells an application: `cleaner-delete` and `lock-failed` (hence the
conditions `cleaner-deleted`, `contended`, `cleaned`) have no counterpart in the Kafka
Streams app (workloads/kstreams-legacy traces task-running, task-first-record,
restore-start/end, client-state, dedup-skip, txn-commit from the `commit-total` metric,
app-config). A step waiting for such a condition fires on its timeout there. These
profiles wait only for what the app does trace (`commits` of a given pod, which also says
that it joined and runs tasks) and take no worker hook (`delay-checkpoint` is refused for
kstreams): slowed checkpoint writes come from the fault filesystem (`io-delay`).

Registered in `faults.plan.TARGETED` after the others, so the existing profiles' plans
(tests/faults/golden_plans.json) are unchanged. Plans are pure functions of the seed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from faults.model import FIRST_FAULT_S, ProfileSettings, Trigger
from faults.model import pod_name as _pod

if TYPE_CHECKING:  # faults.plan imports this module at its end
    from faults.plan import _Builder

def _kafka_7672_kstreams(b: _Builder) -> ProfileSettings:
    """KAFKA-7672 (affects 1.1.0-2.1.1, fixed 2.2.0): a stream thread's
    StoreChangelogReader keeps `completedRestorers` for its whole life (reset() does not
    clear it), so a task whose changelog partitions the thread once restored (at the first
    start, an empty changelog counts) and that comes back to that thread is taken as
    restored at once: `restore()` returns the stale set, the task goes RUNNING after one
    restore poll at most, and, under exactly-once without a checkpoint, after its store
    was wiped ("No checkpoint found ... Reinitializing the task").

    pod-0 (two threads) alone at the start; a spare joins and takes half the tasks (pod-0
    closes them, its cleaner deletes their directories 1.5-2 s later: no checkpoint left);
    the spare is scaled in once it has committed 20 times (it joined, runs the tasks, and
    the changelogs grew: 25 events/s a partition, several seconds); the tasks come back to
    pod-0, in 2.x to the threads that had them first (the assignor deals a client's sorted
    tasks to its sorted threads). The heal waits for the spare's commits, not for a time:
    the spare's JVM start and join take 10-50 s on a loaded machine. Two cycles in a 60 s
    run. The restore poll stays at Kafka Streams' 1000 records: on 2.1.1 a returning task
    without checkpoint was RUNNING before any poll (no restore-start traced), so no delta
    is too small; a smaller poll (`--set restore_max_poll_records=100`) would matter only
    where a checkpoint survives, and a targeted profile passes no poll flag (the worker's
    command line stays as before the knobs: tests/faults/test_knobs.py)."""
    for at in b.times(24, 28):
        spare = _pod(b.spare)
        b.spare += 1
        b.add("scale-out", spare, Trigger(at),
              heal_when=Trigger(4.0, "commits", count=20, timeout_s=40, pod=spare))
    return {"pods": 1, "threads": 2, "partitions": 4, "guarantee": "exactly_once_v2",
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500}


def _kafka_8187_kstreams(b: _Builder) -> ProfileSettings:
    """KAFKA-8187 (affects 2.0.1 to 2.2.1, fixed 2.2.2 and 2.3.0): a thread whose active
    tasks are all RUNNING goes RUNNING itself although a standby it was given could not
    take its task directory's lock (another thread of the process still held it), and
    never tries again until the next rebalance; the cleaner deletes the directory nobody
    holds; at the next rebalance the forgotten standby's close writes the offsets it read
    at creation into a recreated, empty directory, and an active made from it restores
    only what follows them.

    pod-0 (two threads, standbys 1, 7 partitions, cleaner 1.5 s) alone; pod-1 joins at once
    and pod-0 gets standbys. Once pod-1 has committed twice (joined, the standbys have read
    their changelogs), pod-0's checkpoint fsyncs and renames are slowed (the fault
    filesystem, 0.5-1 s per fsync and rename: the Kafka Streams app has no checkpoint hook;
    a standby checkpoints at every commit, so the thread closing one holds its lock longer;
    1-1.5 s slowed pod-0 to a few commits a minute) and spares join and leave one after the
    other, each leaving once it has committed 8 times (it joined and runs tasks; the cleaner
    has had its 1.5 s pass), the next started then: every join and leave deals pod-0's
    standbys over its threads again (the 2.x assignor deals a client's sorted standbys
    round-robin to its sorted threads, so a standby moves between threads whenever one
    before it in that order comes or goes; one spare moved none on 2.2.1, seed 1). Then
    pod-1 is killed and stays down (restart never): after its session (10 s) every active
    fails over to pod-0, the rebalance that closes a forgotten standby and makes its task
    active. What the app cannot tell (no `lock-failed` trace; 2.x logs the LockException at
    TRACE) is whether a contention happened: the run's worker.log lists each thread's
    standbys after each rebalance and the cleaner's deletions."""
    first = _pod(b.spare)
    b.spare += 1
    b.add("scale-out", first, Trigger(0.0))  # stays until the end of the load phase
    slow_at = b.r(4.0, 4.5)
    deadline = max(b.time_limit_s - 16.0, slow_at + 1.0)
    until_deadline = round(deadline - slow_at, 1)
    b.add("io-delay", _pod(0),
          Trigger(slow_at, "commits", count=2, timeout_s=until_deadline, pod=first),
          ms=b.rng.choice([500, 1000]))  # until the end of the load phase
    # The second spare is started when the first leaves (its 8th commit), so its join
    # (a JVM start, 5 s or more) is a rebalance of its own.
    previous: str | None = None
    for _ in range(2):
        spare = _pod(b.spare)
        b.spare += 1
        start = Trigger(slow_at) if previous is None else Trigger(
            slow_at, "commits", count=8, timeout_s=until_deadline, pod=previous)
        b.add("scale-out", spare, start,
              heal_when=Trigger(0.0, "commits", count=8, timeout_s=25, pod=spare))
        previous = spare
    b.add("kill", first, Trigger(deadline))
    # 90 s: at load 10-30 a spare's JVM took up to 19 s to start (2.2.1, seed 1, 60 s:
    # the first spare never ran before its heal's timeout, the second never started).
    return {"pods": 1, "threads": 2, "standbys": 1, "partitions": 7, "accounts": 400,
            "guarantee": "exactly_once_v2", "cleaner_delay_ms": 1500,
            "cleaner_interval_ms": 500, "restart": "never", "time_limit_s": 90.0}


def _kip_406_kstreams(b: _Builder) -> ProfileSettings:
    """KIP-406 (a proposal, never adopted): the global thread recovering by itself from
    an InvalidOffsetException. The global topic is cut past the position of pod-0's
    *running* global consumer (`truncate-global` with `live`: the pod is paused, every
    account written twice, everything before the second copy deleted, the pod resumed).

    Twice in a row, each pair once pod-0 has committed 4 times: a single live cut leaves
    the real consumer valid (seen on 2.1.1, seed 1): the fetch it had in flight when it was
    paused is answered by the broker with the first copy (a long poll waits up to
    fetch.max.wait.ms for data), so its position lands on the cut itself, the new log
    start. The second cut comes within milliseconds of the resume, before the consumer can
    send another fetch: the records it holds end at the first cut's end, below the
    second cut, and its next fetch is out of range (auto.offset.reset is "none" for the
    global consumer). The releases' answer is in the traces (`fatal`, client-state ERROR),
    the pod's exits and restarts (history.jsonl) and the global store's restores
    (`global-restore-start`)."""
    for at in (FIRST_FAULT_S + 4, FIRST_FAULT_S + 22):
        if at > FIRST_FAULT_S + 4 and at >= b.time_limit_s - 8.0:
            break  # no second pair in a run too short for it (8 s: faults.plan's tail)
        b.add("truncate-global", _pod(0),
              Trigger(at, "commits", count=4, timeout_s=20), live=True)
        b.add("truncate-global", _pod(0), Trigger(at), live=True)  # right after
    return {"pods": 1}


KSTREAMS_TARGETED: dict[str, Callable[[_Builder], ProfileSettings]] = {
    "KAFKA-7672-kstreams": _kafka_7672_kstreams,
    "KAFKA-8187-kstreams": _kafka_8187_kstreams,
    "KIP-406-kstreams": _kip_406_kstreams,
}
