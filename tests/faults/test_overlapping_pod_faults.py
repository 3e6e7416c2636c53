"""Pod faults that overlap on one pod compose as cuts do (tests/faults/test_overlapping_links.py):
the pod stays stopped while any pause of it is in force, so the first heal of two does
not resume it early; its volume keeps the rule of every io step in force, so one heal
does not clear another step's. Pure logic on a fake platform and storage."""

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


class FakeStorage:
    def __init__(self) -> None:
        self.rules: dict[str, list[dict[str, Any]]] = {}

    def set_io_rules(self, pod: str, rules: list[dict[str, Any]]) -> None:
        self.rules[pod] = rules


def io(step_id: int, fault: str, **params: Any) -> Step:
    return Step(step_id, fault, "pod-0", Trigger(0.0), params, heal_after_s=5.0)


def test_overlapping_io_steps_keep_each_others_rules_until_their_own_heal() -> None:
    storage = FakeStorage()
    ctx = FaultContext(platform=FakePlatform(), application_id="app",  # type: ignore[arg-type]
                       storage=storage)
    delay = io(0, "io-delay", ms=200)
    error = io(1, "io-error", error="EIO")
    FAULT_KINDS["io-delay"].apply(ctx, delay)
    assert FAULT_KINDS["io-error"].apply(ctx, error)["with"] == [0]
    assert [r["delay_ms"] for r in storage.rules["pod-0"]] == [200, 0]
    assert FAULT_KINDS["io-delay"].heal(ctx, delay) == {"still_in_force": [1]}
    assert [r["error"] for r in storage.rules["pod-0"]] == ["EIO"]  # the error stays
    assert FAULT_KINDS["io-error"].heal(ctx, error) == {}
    assert storage.rules["pod-0"] == []
