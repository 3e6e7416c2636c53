"""The `checkpoint-delete-no-fsync` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from faults.builder import Builder, crash_after_flush_in_txn
from faults.model import ProfileSettings
from faults.scenarios.scenario import Scenario


def plan(b: Builder) -> ProfileSettings:
    """KAFKA-20685's window with a power loss instead of a SIGKILL: pod-0 loses power when
    a memtable flush has persisted an open transaction's writes. The fixed worker's
    RUNNING task has no checkpoint on disk (deleted durably): wipe and restore. With
    `checkpoint-delete-no-fsync` the deletion is undone by the crash and the restore-time
    checkpoint is trusted over a store holding aborted writes (dedup-skip). The first
    start restores an empty changelog (a checkpoint without entries: harmless), so the
    window opens from the second incarnation on."""
    return crash_after_flush_in_txn(b, "power-loss")


SCENARIO = Scenario("checkpoint-delete-no-fsync", plan, switches=("checkpoint-delete-no-fsync",),
                    order=6)
