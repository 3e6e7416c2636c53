"""The `KAFKA-8187-family` scenario, aimed at the real Kafka Streams releases (`--sut
kstreams`, the legacy app, 2.1 to 3.6): the member of KAFKA-8187's family of races that a
released 2.x can reach, where KAFKA-8187's own path cannot (docs/releases.md). No switch:
the race is in the release. Its plan waits for what the app traces: `cleaner-deleted` (the
legacy app's `cleaner-delete`, from the line StateDirectory logs before each delete)."""

from __future__ import annotations

from common.guarantees import AT_LEAST_ONCE
from faults.builder import Builder
from faults.model import FIRST_FAULT_S, ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import KAFKA_STREAMS, Scenario

# Deletes slowed under the task directories: each of the some 30 files and folders of a
# closed task's directory (two RocksDB stores, the checkpoint, the lock) waits this long,
# so a pass that deletes a few directories lasts longer than a session and a rebalance.
UNLINK_DELAY_MS = (300, 400)
TASK_FILES = "*/[0-9]*_[0-9]*/*"  # a task directory's contents (the fault filesystem's paths)
# The spare's leave waits this long for the pass's first delete: its JVM's start and join
# (tens of seconds on a loaded machine), the move, the directories' ageing, the pass.
SPARE_WAIT_S = 70.0


def plan(b: Builder) -> ProfileSettings:
    """The cleaner deletes a directory a task has just read its checkpoint from.

    Up to 2.5 (the releases' sources; where it stops is measured, docs/releases.md) a task
    reads its `.checkpoint` when it is constructed (ProcessorStateManager's constructor)
    and takes its directory's lock later (AbstractTask.registerStateStores). The cleaner
    (StateDirectory.cleanRemovedTasks) deletes each unlocked directory older than
    `state.cleanup.delay.ms`, whether or not its task was just assigned again, and holds
    the state directory's monitor for its whole pass, which `lock()` waits for. So a task
    handed back to a pod while a pass runs reads offset X from its old directory, waits,
    the pass deletes the directory, the lock makes it again, empty, and the task restores
    from X over an empty store: under at-least-once the history before X is gone (under
    exactly-once the constructor deletes the checkpoint after reading it, which touches the
    directory's mtime, so the cleaner leaves it).

    pod-0 (one thread, 8 partitions, at-least-once, no standbys, cleaner every 2 s) alone;
    its deletes under the task directories are slowed (`io-delay` on unlink and rmdir,
    300-400 ms each: a pass over four closed tasks' directories lasts 40-60 s). A spare
    joins and takes half the tasks; pod-0 closes them (a checkpoint each) and, 2 s later, a
    cleaner pass starts deleting their directories one by one. At its first delete
    (`cleaner-deleted` on pod-0) the spare is scaled in: its tasks come back to pod-0,
    whose thread constructs them (reading the checkpoints of the directories the pass has
    not reached yet) and waits for the lock while the pass deletes those directories.
    Accounts are many (4000, 500 a task) so that some of a returning task's keys were not
    written while the spare held it: those are the history before X. One cycle in 120 s:
    the pass ends some 40-80 s in (the spare's start takes longer on a loaded machine), and
    the damaged tasks run on for the rest. Whether a run met the window is its coverage
    class `checkpoint-read-then-cleaned` (a valid run that did not meet it says nothing).
    The traces show the order (`checkpoint-read`, `cleaner-delete`, `dir-locked`,
    `restore-start` from X: StateDirAgent and LogTrace in workloads/kstreams-legacy)."""
    b.add("io-delay", pod_name(0), Trigger(0.0), ms=b.rng.choice(UNLINK_DELAY_MS),
          ops=["unlink"], pattern=TASK_FILES)  # until the end of the load phase
    # One cycle: a second spare's leave would come at a delete of this cycle's long pass,
    # and its join would take the damaged tasks away before they processed a record.
    spare = pod_name(b.spare)
    b.spare += 1
    b.add("scale-out", spare, Trigger(FIRST_FAULT_S),
          heal_when=Trigger(2.0, "cleaner-deleted", timeout_s=SPARE_WAIT_S, pod=pod_name(0)))
    return {"pods": 1, "threads": 1, "standbys": 0, "partitions": 8, "accounts": 4000,
            "guarantee": AT_LEAST_ONCE, "cleaner_delay_ms": 2000,
            "cleaner_interval_ms": 2000, "restart": "never", "time_limit_s": 120.0}


SCENARIO = Scenario("KAFKA-8187-family", plan, switches=(), order=12, sut=KAFKA_STREAMS)
