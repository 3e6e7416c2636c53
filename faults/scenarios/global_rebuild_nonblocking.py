"""The `global-rebuild-nonblocking` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from faults.builder import Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import Scenario


def plan(b: Builder) -> ProfileSettings:
    """The global topic is cut past the position of pod-0's *running* global consumer (the
    pod is paused meanwhile), again and again: the global thread wipes its store and
    rebuilds it while input waits. The fixed worker stops joining until the rebuild is
    done; with `global-rebuild-nonblocking` the stream threads join against the half-built
    table (stale-global: null joins for accounts the topic held). Many accounts make the
    rebuild take long enough to overlap the backlog of the pause."""
    for at in b.times(8, 11):
        b.add("truncate-global", pod_name(0), Trigger(at), live=True)
    return {"pods": 1, "accounts": 2000}


SCENARIO = Scenario("global-rebuild-nonblocking", plan, switches=("global-rebuild-nonblocking",),
                    order=5)
