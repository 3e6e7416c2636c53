"""Pauses that overlap on one pod compose as cuts do (tests/faults/test_overlapping_links.py):
the pod stays stopped while any pause of it is in force, so the first heal of two does
not resume it early. Pure logic on a fake platform."""

from __future__ import annotations

from typing import Any

from faults.context import FaultContext
from faults.kinds import FAULT_KINDS
from faults.model import Step, Trigger


class FakePlatform:
    def __init__(self) -> None:
        self.paused: set[str] = set()
        self.calls: list[tuple[str, str]] = []

    def pause_pod(self, pod: str) -> None:
        self.calls.append(("pause", pod))
        self.paused.add(pod)

    def resume_pod(self, pod: str) -> None:
        self.calls.append(("resume", pod))
        self.paused.discard(pod)


def pause(step_id: int, pod: str = "pod-0") -> Step:
    return Step(step_id, "pause", pod, Trigger(0.0), heal_after_s=5.0)


def test_the_first_of_two_overlapping_pauses_to_heal_leaves_the_pod_paused() -> None:
    platform = FakePlatform()
    ctx = FaultContext(platform=platform, application_id="app")  # type: ignore[arg-type]
    kind = FAULT_KINDS["pause"]
    details: list[Any] = [kind.apply(ctx, pause(0)), kind.apply(ctx, pause(1))]
    assert details == [{}, {"already_paused_by": [0]}]
    assert kind.heal(ctx, pause(0)) == {"still_paused_by": [1]}
    assert platform.paused == {"pod-0"}
    assert kind.heal(ctx, pause(1)) == {}
    assert platform.paused == set()


def test_pauses_of_two_pods_do_not_resume_each_other() -> None:
    platform = FakePlatform()
    ctx = FaultContext(platform=platform, application_id="app")  # type: ignore[arg-type]
    kind = FAULT_KINDS["pause"]
    kind.apply(ctx, pause(0, "pod-0"))
    kind.apply(ctx, pause(1, "pod-1"))
    kind.heal(ctx, pause(0, "pod-0"))
    assert platform.paused == {"pod-1"}
