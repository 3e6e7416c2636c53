"""Profiles aimed at the seed bugs in the real Kafka Streams releases (`--sut kstreams`).

The targeted profiles of `faults.plan` were written for the Python worker, which traces
more than Kafka Streams tells an application. The legacy app (2.1 to 3.6) traces
`lock-failed` and `cleaner-delete` from Kafka Streams' log lines (LogTrace.java; the lock
line exists up to 2.5), hence the conditions `contended` and `cleaned` hold there; the
3.7+ app traces neither. These profiles wait for what the app traces (`commits` of a
given pod, which also says that it joined and runs tasks; KAFKA-8187-kstreams also
`cleaned`) and take no worker hook (`delay-checkpoint` is refused for
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
    from faults.builder import Builder

def _kafka_7672_kstreams(b: Builder) -> ProfileSettings:
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


# KAFKA-8187-kstreams: spare cycles, each a join and, apart from it, a leave (two
# rebalances that deal pod-0's standbys over its threads again). A spare stays for
# `SPARE_STAY_COMMITS_8187` commits of its own (at 500 ms a thread, 16 are some 4 s of
# running: a pass of the 1.5 s cleaner after a contention at its join), at most
# `SPARE_STAY_MAX_S_8187` s from its start; the next starts a period after it. A join
# that comes during the leave's rebalance (pod-0's slowed revocation takes 6-8 s) is one
# rebalance with it, and the sticky assignor deals the newcomer what the leaver had and
# pod-0 the same tasks again: 2.2.1 seed 2 (each spare started when the one before left)
# and seed 1 (28 s apart), four and five cycles, two distinct deals on pod-0 each.
SPARE_CYCLES_8187 = 4
SPARE_PERIOD_S_8187 = 32.0
# The period counted in pod-1's commits (it runs unslowed, 2 threads: 3.5 a second when
# settled, none while a rebalance lasts), the steps' `at_s` all the delay's: an ordered
# plan runs its steps sorted by `at_s`, and `cleaned` counts from its step's `at_s`.
SPARE_PERIOD_COMMITS_8187 = 100
SPARE_STAY_COMMITS_8187 = 16
SPARE_STAY_MAX_S_8187 = 20.0


def _kafka_8187_kstreams(b: Builder) -> ProfileSettings:
    """KAFKA-8187 (affects 2.0.1 to 2.2.1, fixed 2.2.2 and 2.3.0): a thread whose active
    tasks are all RUNNING goes RUNNING itself although a standby it was given could not
    take its task directory's lock (another thread of the process still held it), and
    never tries again until the next rebalance; the cleaner deletes the directory nobody
    holds.

    pod-0 (two threads, standbys 1, 9 partitions, cleaner 1.5 s) alone; pod-1 joins at once
    and pod-0 gets standbys. Once pod-1 has committed twice, pod-0's checkpoint fsyncs and
    renames are slowed (the fault filesystem, 0.5-1 s each: a thread closing a standby
    commits it, a checkpoint, under its lock, after the standbys it closes before it) and
    spares join and leave one after the other (`SPARE_CYCLES_8187`, one every
    `SPARE_PERIOD_COMMITS_8187` commits of pod-1, at most `SPARE_PERIOD_S_8187` s), each
    staying for `SPARE_STAY_COMMITS_8187` commits of its own (at most
    `SPARE_STAY_MAX_S_8187` s from its start): every join and leave deals pod-0's standbys
    over its threads again (the 2.x assignor deals a client's sorted standbys round-robin
    to its threads). The app traces what the release logs of it (`lock-failed` from
    AssignedTasks' TRACE line, `cleaner-delete` from StateDirectory's,
    workloads/kstreams-legacy LogTrace.java), so the failover follows
    the system: pod-1 is killed once the cleaner has deleted the directory of a standby
    that failed its lock (`cleaned`, any pod, since the delay began), or at the deadline.
    It stays down (restart never): after its session (10 s) every active fails over to
    pod-0. On 2.2.2 the thread retries the lock until the other one lets go, the cleaner
    finds the directory locked, `cleaned` does not hold and the kill comes at its
    deadline."""
    first = _pod(b.spare)
    b.spare += 1
    b.add("scale-out", first, Trigger(0.0))  # stays until the end of the load phase
    slow_at = b.r(4.0, 4.5)
    deadline = max(b.time_limit_s - 20.0, slow_at + 1.0)
    until_deadline = round(deadline - slow_at, 1)
    b.add("io-delay", _pod(0),
          Trigger(slow_at, "commits", count=2, timeout_s=until_deadline, pod=first),
          ms=b.rng.choice([500, 1000]))  # until the end of the load phase
    for cycle in range(SPARE_CYCLES_8187):
        spare = _pod(b.spare)
        b.spare += 1
        start = Trigger(slow_at) if cycle == 0 else Trigger(
            slow_at, "commits", count=cycle * SPARE_PERIOD_COMMITS_8187,
            timeout_s=cycle * SPARE_PERIOD_S_8187, pod=first)
        b.add("scale-out", spare, start,
              heal_when=Trigger(0.0, "commits", count=SPARE_STAY_COMMITS_8187,
                                timeout_s=SPARE_STAY_MAX_S_8187, pod=spare))
    # `cleaned` counts from slow_at: a contention in any cycle, its directory deleted.
    b.add("kill", first, Trigger(slow_at, "cleaned", timeout_s=until_deadline))
    # 190 s: four cycles (a JVM start of 5-19 s at load 10-30, a stay, a leave), then the
    # failover 10 s after the kill, and load after it. 9 partitions: pod-0 holds more
    # standbys, so a join or leave more often shifts the sorted list its threads are dealt.
    return {"pods": 1, "threads": 2, "standbys": 1, "partitions": 9, "accounts": 400,
            "guarantee": "exactly_once_v2", "cleaner_delay_ms": 1500,
            "cleaner_interval_ms": 500, "restart": "never", "time_limit_s": 190.0}


def _kip_406_kstreams(b: Builder) -> ProfileSettings:
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


KSTREAMS_TARGETED: dict[str, Callable[[Builder], ProfileSettings]] = {
    "KAFKA-7672-kstreams": _kafka_7672_kstreams,
    "KAFKA-8187-kstreams": _kafka_8187_kstreams,
    "KIP-406-kstreams": _kip_406_kstreams,
}
