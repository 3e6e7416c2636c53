"""The `KAFKA-7672` scenario: its switch, its plan, what a catch shows."""

from __future__ import annotations

from common.guarantees import EXACTLY_ONCE_V2
from faults.builder import Builder
from faults.model import ProfileSettings, Trigger, pod_name
from faults.scenarios.scenario import Scenario


def plan(b: Builder) -> ProfileSettings:
    """Tasks leave pod-0's threads for a scaled-out pod long enough for the cleaner to
    delete their directories, then come back: a thread that restored a task before finds
    it without checkpoint or data and must restore it again from the changelog.

    The scale-in follows the system, not the clock: it comes once pod-0's cleaner has
    deleted a directory of a task that left it (the spare joined and took it), however long
    the spare took to start and join (a loaded machine, a pod container); a fixed hold was
    missed under load. The fixed worker's cleaner deletes the same directories, so it runs
    the same sequence. Cycles are 22-26 s apart (one in a 30 s run): a spare scaled out
    before the tasks came back took them instead. How the spacing was measured, and why it
    could now be shorter: docs/faults.md#windows-that-follow-the-system."""
    for at in b.times(22, 26):
        b.add("scale-out", pod_name(b.spare), Trigger(at),
              heal_when=Trigger(2.0, "cleaner-deleted", timeout_s=25, pod=pod_name(0)))
        b.spare += 1
    return {"pods": 1, "threads": 2, "guarantee": EXACTLY_ONCE_V2,
            "cleaner_delay_ms": 1500, "cleaner_interval_ms": 500}


SCENARIO = Scenario("KAFKA-7672", plan, switches=("KAFKA-7672",), order=1, in_ci=True,
                    expected=frozenset({"lost-history"}))
