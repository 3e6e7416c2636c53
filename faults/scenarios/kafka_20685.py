"""The `KAFKA-20685` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from faults.builder import Builder, crash_after_flush_in_txn
from faults.model import ProfileSettings
from faults.scenarios.scenario import Scenario


def plan(b: Builder) -> ProfileSettings:
    """SIGKILL pod-0 again and again at the moment a memtable flush has persisted writes of
    a still-open transaction (long transactions, small write buffers): a restore-time
    checkpoint left in place is then trusted over a store holding aborted writes."""
    return crash_after_flush_in_txn(b, "kill")


SCENARIO = Scenario("KAFKA-20685", plan, switches=("KAFKA-20685",), order=0, in_ci=True,
                    expected=frozenset({"dedup-skip", "stale-checkpoint"}))
