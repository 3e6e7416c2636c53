"""The `clock-jump` scenario: pods' wall clocks jump inside a transaction and past the
session timeout (faults/clock.py), with no switch: the fixed worker must stay valid."""

from __future__ import annotations

from common.guarantees import EXACTLY_ONCE_V2
from faults.builder import QUIET_TAIL_S, Builder
from faults.model import FIRST_FAULT_S, ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import Scenario


def plan(b: Builder) -> ProfileSettings:
    """Kafka clients time polls, heartbeats, sessions, transactions and commit intervals on
    the wall clock. Exactly-once with 2 s transactions, so a step right after a commit
    lands in an open transaction:
    1. pod-0's clock jumps 30 s ahead (three session timeouts) right after a commit: its
       client sees its session and its transaction as long expired; 6 s later it is
       stepped back, 30 s behind what it has seen.
    2. pod-1's clock jumps 30 s behind right after a commit: its heartbeats, due on its
       clock, stop until the heal 12 s later, past the broker's session timeout (10 s):
       the group moves its tasks while it still believes it holds them.
    3. pod-0's clock runs three times as fast for 8 s (a skew), then steps back.
    Each step waits for the one before it and for its pod's commit, whose trace is read
    on the pod's own clock: no step waits on a pod whose clock is off."""
    def fits(at: float) -> bool:  # a run too short for a step leaves it out
        return at < b.time_limit_s - QUIET_TAIL_S

    if fits(FIRST_FAULT_S):
        b.add("clock", pod_name(0), Trigger(FIRST_FAULT_S, "commits", count=2, timeout_s=15),
              heal_after_s=6.0, jump_s=30.0)
    if fits(FIRST_FAULT_S + 8):
        b.add("clock", pod_name(1), Trigger(FIRST_FAULT_S + 8, "commits", timeout_s=15),
              heal_after_s=12.0, jump_s=-30.0)
    if fits(FIRST_FAULT_S + 24):
        b.add("clock", pod_name(0), Trigger(FIRST_FAULT_S + 24, timeout_s=15),
              heal_after_s=8.0, rate=3.0)
    return {"pods": 2, "standbys": 1, "partitions": 6, "guarantee": EXACTLY_ONCE_V2,
            "commit_interval_ms": 2000}


SCENARIO = Scenario("clock-jump", plan, switches=(), order=11,
                    expected=frozenset({"clock-jump-in-txn-or-session"}))
