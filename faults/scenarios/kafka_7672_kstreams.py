"""The `KAFKA-7672-kstreams` scenario, aimed at the real Kafka Streams releases (`--sut
kstreams`), whose app traces less than the worker: its plan waits only for what the app
traces (`commits` of a given pod, which also says that it joined and runs tasks) and takes
no fault the kstreams system under test refuses (no worker hook: slowed checkpoint writes
come from the fault filesystem, `io-delay`). No switch: the bug is in the release
(docs/releases.md)."""

from __future__ import annotations

from common.guarantees import EXACTLY_ONCE_V2
from faults.builder import Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import KAFKA_STREAMS, Scenario


def plan(b: Builder) -> ProfileSettings:
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
        spare = pod_name(b.spare)
        b.spare += 1
        b.add("scale-out", spare, Trigger(at),
              heal_when=Trigger(4.0, "commits", count=20, timeout_s=40, pod=spare))
    return {"pods": 1, "threads": 2, "partitions": 4, "guarantee": EXACTLY_ONCE_V2,
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500}


SCENARIO = Scenario("KAFKA-7672-kstreams", plan, switches=(), order=8, sut=KAFKA_STREAMS)
