"""The `store-wal-no-sync` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from common.guarantees import AT_LEAST_ONCE
from faults.builder import Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import Scenario
from faults.windows import commits_wait_s


def plan(b: Builder) -> ProfileSettings:
    """At-least-once, pod-0 loses power right after commits (each writes a checkpoint).
    The fixed worker flushed its stores before each checkpoint; with `store-wal-no-sync`
    the writes since the last memtable flush lived in an unsynced log the crash drops,
    while the checkpoint claims them (lost-history, wrong-balance). Big write buffers keep
    the memtable from flushing by itself between commits."""
    for at in b.times(7, 10):
        b.add("power-loss", pod_name(0), Trigger(at, "commits", count=3,
                                                        timeout_s=commits_wait_s(b.settings, 3)),
              heal_after_s=b.r(1, 2))
    return {"pods": 1, "threads": 1, "partitions": 1, "guarantee": AT_LEAST_ONCE,
            "rate": 100.0, "write_buffer_bytes": 4 << 20}


SCENARIO = Scenario("store-wal-no-sync", plan, switches=("store-wal-no-sync",), order=7)
