"""The `KIP-406` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from faults.builder import Builder
from faults.model import FIRST_FAULT_S, ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import Scenario
from faults.windows import commits_wait_s


def plan(b: Builder) -> ProfileSettings:
    """The global topic is truncated past pod-0's global checkpoint while it is down."""
    b.add("truncate-global", pod_name(0), Trigger(FIRST_FAULT_S + 4, "commits", count=4,
                                                   timeout_s=commits_wait_s(b.settings, 4)))
    return {"pods": 1}


SCENARIO = Scenario("KIP-406", plan, switches=("KIP-406",), order=3, in_ci=True,
                    expected=frozenset({"unavailable"}))
