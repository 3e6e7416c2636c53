"""The restart policy (harness/platforms/supervised.py) on an in-memory platform and a
hand-turned clock: pure bookkeeping, no process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fake_clock import FakeClock

from faults.platform import Pod
from harness.platforms.base import PodInventory
from harness.platforms.supervised import (
    WATCHDOG_EXIT,
    RestartPolicy,
    SupervisedPlatform,
    exit_cause,
)


class MemoryPlatform(PodInventory):
    """Pods are flags on two nodes; `crash` makes a pod's process exit as a real one would."""

    name = "memory"

    def __init__(self) -> None:
        super().__init__(Path("/nonexistent"), node_count=2)
        self._exited: list[tuple[str, int]] = []
        self.starts: list[str] = []
        self.torn_down = False

    def add_pod(self, name: str, node: str) -> Pod:
        self._pods[name] = Pod(name, node)
        self.start_pod(name)
        return self._pods[name]

    def start_pod(self, name: str) -> None:
        pod = self._pods[name]
        if not pod.running:
            pod.running = True
            pod.incarnation += 1
            self.starts.append(name)

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        self._pods[name].running = False

    kill_pod = stop_pod

    def remove_pod(self, name: str) -> None:
        self.stop_pod(name)

    def move_pod(self, name: str, node: str, keep_volume: bool) -> None:
        self.stop_pod(name)
        self._pods[name].node = node
        self.start_pod(name)

    def pause_pod(self, name: str) -> None: ...

    def resume_pod(self, name: str) -> None: ...

    def crash(self, name: str, code: int) -> None:
        self._pods[name].running = False
        self._exited.append((name, code))

    def poll(self) -> list[tuple[str, int]]:
        exited, self._exited = self._exited, []
        return exited

    def volume(self, name: str) -> Path:
        return Path("/nonexistent") / name

    def teardown(self) -> None:
        self.torn_down = True
        for pod in self._pods.values():
            pod.running = False




@pytest.fixture
def setup() -> tuple[MemoryPlatform, SupervisedPlatform, FakeClock, list[dict[str, Any]]]:
    inner, clock, ops = MemoryPlatform(), FakeClock(), []
    sup = SupervisedPlatform(
        inner, RestartPolicy(backoff_s=1.0, max_backoff_s=4.0, reset_after_s=10.0),
        lambda process, type_, f, value: ops.append({"f": f, **value}), clock=clock,
    )
    sup.add_pod("pod-0", "node-0")
    return inner, sup, clock, ops


def at(clock: FakeClock, sup: SupervisedPlatform, t: float) -> None:
    clock.now = t
    sup.tick()


def test_a_crashed_pod_restarts_after_the_backoff_which_doubles_then_resets(setup) -> None:
    inner, sup, clock, ops = setup
    clock.now = 12.0  # ran longer than reset_after_s: first back-off
    inner.crash("pod-0", 1)
    at(clock, sup, 12.0)
    assert not inner.pod("pod-0").running
    at(clock, sup, 12.9)
    assert not inner.pod("pod-0").running
    at(clock, sup, 13.0)
    assert inner.pod("pod-0").running and inner.pod("pod-0").incarnation == 2
    inner.crash("pod-0", 1)  # at once again: crash loop, the back-off doubles
    at(clock, sup, 13.5)
    at(clock, sup, 14.9)
    assert not inner.pod("pod-0").running
    at(clock, sup, 15.5)
    assert inner.pod("pod-0").running
    for t, backoff in ((16.0, 4.0), (20.5, 4.0)):  # doubling stops at max_backoff_s
        inner.crash("pod-0", 1)
        at(clock, sup, t)
        at(clock, sup, t + backoff)
        assert inner.pod("pod-0").running
    restarts = [o for o in ops if o["f"] == "pod-restarted"]
    assert [o["backoff_s"] for o in restarts] == [1.0, 2.0, 4.0, 4.0]
    clock.now = 40.0  # 11 s of running since the last restart: back to the first back-off
    at(clock, sup, 40.0)
    inner.crash("pod-0", 1)
    at(clock, sup, 40.0)
    at(clock, sup, 41.0)
    assert [o["backoff_s"] for o in ops if o["f"] == "pod-restarted"][-1] == 1.0
    exits = [o for o in ops if o["f"] == "pod-exited"]
    assert exits[0] == {"f": "pod-exited", "target": "pod-0", "cause": "crashed", "exit_code": 1}
    assert sup.restart_count() == 5
    assert sup.poll() == [("pod-0", 1)] * 5  # the run still learns of every exit


def test_a_nemesis_kill_comes_back_by_policy_and_a_heal_start_does_not_start_it_twice(
    setup,
) -> None:
    inner, sup, clock, ops = setup
    clock.now = 20.0
    sup.kill_pod("pod-0")
    assert ops[-1] == {"f": "pod-exited", "target": "pod-0", "cause": "nemesis-kill",
                       "signal": "SIGKILL"}
    at(clock, sup, 21.0)
    assert inner.pod("pod-0").running
    sup.start_pod("pod-0")  # the plan's heal, later: nothing to do
    assert inner.starts == ["pod-0", "pod-0"]
    assert sup.poll() == []  # a nemesis kill is not a death of the pod's own making


def test_a_heal_before_the_backoff_starts_it_and_cancels_the_restart(setup) -> None:
    inner, sup, clock, ops = setup
    clock.now = 20.0
    sup.kill_pod("pod-0")
    clock.now = 20.3
    sup.start_pod("pod-0")
    at(clock, sup, 25.0)
    assert inner.starts == ["pod-0", "pod-0"]
    assert not [o for o in ops if o["f"] == "pod-restarted"]


def test_a_stopped_pod_stays_down_until_started(setup) -> None:
    inner, sup, clock, ops = setup
    sup.stop_pod("pod-0")
    assert ops[-1]["cause"] == "nemesis-stop"
    at(clock, sup, 100.0)
    assert not inner.pod("pod-0").running
    sup.start_pod("pod-0")
    assert inner.pod("pod-0").running


def test_policy_never_leaves_an_exited_pod_down(setup) -> None:
    inner, _, clock, _ops = setup
    sup = SupervisedPlatform(inner, RestartPolicy(mode="never"),
                             lambda *a: None, clock=clock)
    inner.crash("pod-0", 1)
    at(clock, sup, 50.0)
    assert not inner.pod("pod-0").running
    assert sup.poll() == [("pod-0", 1)]


def test_teardown_never_restarts_a_killed_pod(setup) -> None:
    inner, sup, clock, _ = setup
    clock.now = 20.0
    sup.kill_pod("pod-0")
    sup.teardown()
    at(clock, sup, 30.0)
    assert inner.torn_down and not inner.pod("pod-0").running
    assert inner.starts == ["pod-0"]


@pytest.mark.parametrize(
    ("code", "fact"),
    [
        (WATCHDOG_EXIT, {"cause": "watchdog", "exit_code": WATCHDOG_EXIT}),
        (1, {"cause": "crashed", "exit_code": 1}),
        (-9, {"cause": "crashed", "exit_code": -9, "signal": "SIGKILL"}),  # a process
        (137, {"cause": "crashed", "exit_code": 137, "signal": "SIGKILL"}),  # a container
        (143, {"cause": "crashed", "exit_code": 143, "signal": "SIGTERM"}),
    ],
)
def test_exit_causes(code: int, fact: dict[str, Any]) -> None:
    assert exit_cause(code) == fact


def test_a_kill_that_keeps_the_pod_down_is_a_sigkill_no_policy_restarts(setup) -> None:
    """`kill` with `down`: a crashed machine. Its op is a SIGKILL (coverage counts it as a
    crash); the pod comes back only with the plan's heal, past its session."""
    from faults.context import FaultContext
    from faults.kinds import FAULT_KINDS
    from faults.model import Step, Trigger

    inner, sup, clock, ops = setup
    ctx = FaultContext(platform=sup, brokers=None, global_topic=None, application_id="app")
    step = Step(0, "kill", "pod-0", Trigger(1.0), {"down": True}, heal_after_s=15.0)
    clock.now = 20.0
    FAULT_KINDS["kill"].apply(ctx, step)
    assert ops[-1] == {"f": "pod-exited", "target": "pod-0", "cause": "nemesis-kill",
                       "signal": "SIGKILL"}
    at(clock, sup, 34.0)  # the policy's back-off (1 s) is long past
    assert not inner.pod("pod-0").running
    FAULT_KINDS["kill"].heal(ctx, step)
    assert inner.pod("pod-0").running and inner.pod("pod-0").incarnation == 2
