"""The `KAFKA-8187-kstreams` scenario, aimed at the real Kafka Streams releases
(`--sut kstreams`), whose app traces less than the worker: its plan waits only for what
the app traces (`commits` of a given pod, and `cleaned`: the legacy app, 2.1 to 3.6,
traces `lock-failed` and `cleaner-delete` from Kafka Streams' log lines, LogTrace.java;
the lock line exists up to 2.5) and takes no fault the kstreams system under test refuses
(no worker hook: slowed checkpoint writes come from the fault filesystem, `io-delay`). No
switch: the bug is in the release (docs/releases.md)."""

from __future__ import annotations

from common.guarantees import EXACTLY_ONCE_V2
from faults.builder import Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import KAFKA_STREAMS, Scenario

# KAFKA-8187-kstreams: spare cycles, each a join and, apart from it, a leave (two
# rebalances that deal pod-0's standbys over its threads again). A spare stays for
# `SPARE_STAY_COMMITS_8187` commits of its own (at 500 ms a thread, 16 are some 4 s of
# running: a pass of the 1.5 s cleaner after a contention at its join), at most
# `SPARE_STAY_MAX_S_8187` s from its start; the next starts a period after it. A join
# that comes during the leave's rebalance (pod-0's slowed revocation takes 6-8 s) is one
# rebalance with it, and the sticky assignor deals the newcomer what the leaver had and
# pod-0 the same tasks again (docs/releases.md, KAFKA-8187's profiles).
SPARE_CYCLES_8187 = 4
SPARE_PERIOD_S_8187 = 32.0
# The period counted in pod-1's commits (it runs unslowed, 2 threads: 3.5 a second when
# settled, none while a rebalance lasts), the steps' `at_s` all the delay's: an ordered
# plan runs its steps sorted by `at_s`, and `cleaned` counts from its step's `at_s`.
SPARE_PERIOD_COMMITS_8187 = 100
SPARE_STAY_COMMITS_8187 = 16
SPARE_STAY_MAX_S_8187 = 20.0


def plan(b: Builder) -> ProfileSettings:
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
    first = pod_name(b.spare)
    b.spare += 1
    b.add("scale-out", first, Trigger(0.0))  # stays until the end of the load phase
    # 20 s before the end at a 10 s session: the failover a session after the kill.
    slow_at, until_deadline = b.window(before_end_s=b.settings.session_s + 10.0)
    b.add("io-delay", pod_name(0),
          Trigger(slow_at, "commits", count=2, timeout_s=until_deadline, pod=first),
          ms=b.rng.choice([500, 1000]))  # until the end of the load phase
    for cycle in range(SPARE_CYCLES_8187):
        spare = pod_name(b.spare)
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
            "guarantee": EXACTLY_ONCE_V2, "cleaner_delay_ms": 1500,
            "cleaner_interval_ms": 500, "restart": "never", "time_limit_s": 190.0}


SCENARIO = Scenario("KAFKA-8187-kstreams", plan, switches=(), order=9, sut=KAFKA_STREAMS)
