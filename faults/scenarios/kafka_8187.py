"""The `KAFKA-8187` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from faults.builder import Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import Scenario


def plan(b: Builder) -> ProfileSettings:
    """A standby moves between the two threads of pod-0 while the old owner is slow to let
    go; the cleaner deletes its directory; a restart writes its creation-time checkpoint
    into the empty directory; every active fails over to pod-0 and trusts it.

    7 partitions, 2 threads per pod, standbys=1, pod-0 alone at the start. The assignor is
    deterministic (workloads/worker/assignor.py): whichever way pod-0's two threads
    joined the empty group (together, or one first and taking every task), when pod-1
    and then pod-2 join, pod-0's standbys 0_4 and 0_6 move from StreamThread-1 to
    StreamThread-2 (standbys are spread over threads in task order).
    1. pod-1 joins at once; pod-0's StreamThread-1 gets standbys (0_4, 0_6), which read
       their changelogs for a few seconds.
    2. pod-0's closing checkpoint writes are slowed down (only those: a slowed thread loop
       would miss the next rebalance) and pod-2 joins. StreamThread-1, closing 0_4 and
       then 0_6 with slow checkpoint writes, still holds 0_6's directory when
       StreamThread-2 creates the standby: lock contention (`contended`), the standby's
       only lock attempt under the bug. The delay then ends.
    3. StreamThread-1 lets go and the cleaner (cleaner_delay_ms 1500) deletes the
       directory nobody holds (`cleaned`). pod-1 and pod-2 are killed: every active will
       fail over to pod-0 once their sessions time out (10 s; restarted sooner, static
       members would get their tasks back without a rebalance), so which task and which
       thread does not matter. pod-0 is stopped and restarted at once: closing the
       forgotten standby writes the offsets read at creation into the recreated, empty
       directory; the restarted process trusts them (task-init with a checkpoint,
       entries 0: stale-checkpoint) and restores only what follows.
    4. The failover makes that store active: history before the stale offset is gone.
    The fixed worker retries the lock and checkpoints a complete store. It sees the same
    contention, so the delay ends at the same moment; `cleaned` never holds and the kills
    come at their deadline, a moment later than in a run with the bug.
    Detection: a re-sent event from before the stale offset is processed again
    (duplicate-output, wrong-balance); accounts not written between the stale offset and
    the kill go back (lost-history; 400 accounts make such cold accounts likely). Each
    step waits for the join it needs (pod-1's commits, the contention pod-2's join
    makes), not for a moment: as processes the sequence to the kills takes 9-14 s, the
    failover another 11 s, and some load must follow it (--time-limit 40 or more); as
    containers (9-12 s a start) use --time-limit 60."""
    first, second = pod_name(b.spare), pod_name(b.spare + 1)
    b.spare += 2
    b.add("scale-out", first, Trigger(0.0))  # stays until the end of the load phase
    # Killed 16 s before the load phase ends at the latest (at a 10 s session): the
    # failover (a session later) must come well before the end restarts them.
    slow_at, until_deadline = b.window(before_end_s=b.settings.session_s + 6.0)
    # The standbys pod-1's join gave pod-0 must read their changelogs for a while before
    # the delay: the offsets a forgotten standby hands over must not be empty (an empty
    # stale checkpoint is harmless). pod-1 joins in ~2 s as a process, 9-12 s as a
    # container: wait for its second commit (it is RUNNING, the standbys have read).
    b.add("delay-checkpoint", pod_name(0),
          Trigger(slow_at, "commits", count=2, timeout_s=until_deadline, pod=first),
          ms=b.rng.choice([1000, 1500]), reasons=["close"])
    b.add("scale-out", second, Trigger(slow_at))  # right after the delay is in force
    # pod-2's join makes the contention, however long its start takes.
    b.add("delay-checkpoint", pod_name(0),
          Trigger(slow_at, "contended", timeout_s=until_deadline), ms=0)
    cleaned = Trigger(slow_at, "cleaned", timeout_s=until_deadline)
    b.add("kill", first, cleaned)
    b.add("kill", second, Trigger(slow_at))  # right after
    b.add("stop", pod_name(0), Trigger(slow_at), heal_after_s=0.5)
    # The killed pods must stay down until their sessions time out (a restart policy would
    # bring them back as the same static members, with their tasks).
    return {"pods": 1, "threads": 2, "standbys": 1, "partitions": 7, "accounts": 400,
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500, "restart": "never"}


SCENARIO = Scenario("KAFKA-8187", plan, switches=("KAFKA-8187",), order=2, in_ci=True,
                    expected=frozenset({"lost-history", "duplicate-output"}), ci_time_limit_s=40.0)
