"""The nemesis loop on a recording fake platform (pure scheduling logic, no processes)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from faults.context import FaultContext
from faults.model import Plan, Step, Trigger
from faults.nemesis import Nemesis
from faults.observe import TraceWatcher
from faults.platform import Pod
from harness.platforms.base import PodInventory


class RecordingPlatform(PodInventory):
    """Pods on two nodes (PodInventory's bookkeeping) that record what was done to them."""

    name = "fake"

    def __init__(self, root: Path, pods: list[str]) -> None:
        super().__init__(root, node_count=2)
        self.root = root
        self.calls: list[tuple[str, str]] = []
        self._pods = {p: Pod(p, "node-0", running=True) for p in pods}

    def _call(self, what: str, name: str) -> None:
        self.calls.append((what, name))

    def add_pod(self, name: str, node: str) -> Pod:
        self._call("add", name)
        self._pods[name] = Pod(name, node, running=True)
        return self._pods[name]

    def start_pod(self, name: str) -> None:
        self._call("start", name)

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        self._call("stop", name)

    def kill_pod(self, name: str) -> None:
        self._call("kill", name)

    def pause_pod(self, name: str) -> None:
        self._call("pause", name)

    def resume_pod(self, name: str) -> None:
        self._call("resume", name)

    def move_pod(self, name: str, node: str, keep_volume: bool) -> None:
        self._call(f"move-{'keep' if keep_volume else 'empty'}", name)

    def remove_pod(self, name: str) -> None:
        self._call("remove", name)

    def volume(self, name: str) -> Path:
        return self.pod_dir(name) / "state"

    def poll(self) -> list[tuple[str, int]]:
        return []

    def teardown(self) -> None:
        pass


def _run(plan: Plan, platform: RecordingPlatform, seconds: float) -> tuple[Nemesis, list[Any]]:
    ops: list[Any] = []
    ctx = FaultContext(platform=platform, application_id="app")
    nemesis = Nemesis(plan, ctx, TraceWatcher(platform, "app"),
                      lambda p, t, f, v: ops.append((p, t, f, v)))
    nemesis.start()
    time.sleep(seconds)
    nemesis.stop_and_heal()
    return nemesis, ops


def test_steps_apply_in_time_order_and_heal_when_due(tmp_path: Path) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0", "pod-1"])
    plan = Plan(1, "t", (
        Step(0, "pause", "pod-1", Trigger(0.3), heal_after_s=0.2),
        Step(1, "kill", "pod-0", Trigger(0.0), heal_after_s=0.1),
    ))
    nemesis, ops = _run(plan, platform, 1.0)
    assert platform.calls == [("kill", "pod-0"), ("start", "pod-0"),
                              ("pause", "pod-1"), ("resume", "pod-1")]
    assert [o.status for o in nemesis.outcomes] == ["healed", "healed"]
    phases = [(op[2], op[3]["target"], op[3]["phase"]) for op in ops]
    assert phases == [("kill", "pod-0", "start"), ("kill", "pod-0", "end"),
                      ("pause", "pod-1", "start"), ("pause", "pod-1", "end")]
    assert all(op[0] == "nemesis" and op[1] == "info" for op in ops)


class SlowStopPlatform(RecordingPlatform):
    """A pod's clean stop takes 5 s of the nemesis's clock (a broker's, on a loaded
    machine), so the steps after it are all due when it returns."""

    def __init__(self, root: Path, pods: list[str], clock: list[float]) -> None:
        super().__init__(root, pods)
        self.clock = clock

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        super().stop_pod(name, grace_s)
        self.clock[0] += 5.0


@pytest.mark.parametrize("ordered", [True, False])
def test_a_heal_due_during_a_long_apply_comes_before_the_next_step(
    tmp_path: Path, ordered: bool
) -> None:
    """Before: the steps due after a slow apply started in a burst, the first fault still
    in force (a broker run lost its quorum this way: three brokers down at once)."""
    clock = [0.0]
    platform = SlowStopPlatform(tmp_path, ["pod-0", "pod-1"], clock)
    plan = Plan(1, "t", (
        Step(0, "stop", "pod-0", Trigger(0.0), heal_after_s=1.0),
        Step(1, "kill", "pod-1", Trigger(2.0), heal_after_s=1.0),
    ), ordered=ordered)
    ctx = FaultContext(platform=platform, application_id="app")
    nemesis = Nemesis(plan, ctx, TraceWatcher(platform, "app"), lambda *op: None,
                      monotonic=lambda: clock[0], wall_ns=lambda: int(clock[0] * 1e9))
    nemesis.begin()
    nemesis.tick()
    assert platform.calls[:3] == [("stop", "pod-0"), ("start", "pod-0"), ("kill", "pod-1")]


def test_a_fault_still_in_force_at_the_end_is_healed_and_late_steps_skipped(
    tmp_path: Path,
) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    plan = Plan(1, "t", (
        Step(0, "delay-checkpoint", "pod-0", Trigger(0.0), {"ms": 700}),
        Step(1, "kill", "pod-0", Trigger(60.0), heal_after_s=1),
    ))
    nemesis, _ = _run(plan, platform, 0.4)
    assert [o.status for o in nemesis.outcomes] == ["healed", "skipped"]
    assert json.loads(platform.control_path("pod-0").read_text()) == {
        "checkpoint_delay_ms": 0, "checkpoint_delay_reasons": []}


def test_condition_trigger_waits_for_the_trace_then_fires(tmp_path: Path) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    trace = platform.trace_path("pod-0")
    trace.parent.mkdir(parents=True)
    plan = Plan(1, "t", (Step(0, "kill", "pod-0", Trigger(0.0, "commits", count=2,
                                                           timeout_s=30)),))
    ops: list[Any] = []
    nemesis = Nemesis(plan, FaultContext(platform=platform, application_id="app"),
                      TraceWatcher(platform, "app"), lambda *op: ops.append(op))
    nemesis.start()
    with trace.open("a") as out:
        for _ in range(2):
            time.sleep(0.3)
            assert platform.calls == []  # not yet: fewer commits than asked
            out.write(json.dumps({"ts_ns": time.time_ns(), "pid": 1,
                                  "event": "txn-commit"}) + "\n")
            out.flush()
    deadline = time.monotonic() + 5
    while not platform.calls and time.monotonic() < deadline:
        time.sleep(0.05)
    nemesis.stop_and_heal()
    assert platform.calls[0] == ("kill", "pod-0")
    assert nemesis.outcomes[0].condition_met is True


def test_condition_that_never_holds_fires_at_its_timeout(tmp_path: Path) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    plan = Plan(1, "t", (Step(0, "stop", "pod-0", Trigger(0.0, "restored", timeout_s=0.3),
                              heal_after_s=0.1),))
    nemesis, _ = _run(plan, platform, 1.0)
    assert platform.calls == [("stop", "pod-0"), ("start", "pod-0")]
    assert nemesis.outcomes[0].condition_met is False


def test_a_failing_fault_is_recorded_not_raised(tmp_path: Path) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    plan = Plan(1, "t", (Step(0, "kill-broker", "broker-1", Trigger(0.0), heal_after_s=0.1),))
    nemesis, ops = _run(plan, platform, 0.5)
    assert nemesis.outcomes[0].status == "failed"
    assert "kill-broker needs brokers" in (nemesis.outcomes[0].error or "")
    assert ops[0][3]["error"]
    assert (nemesis.applied, nemesis.failed) == (1, 1)  # the live line says "(1 failed)"


def test_instant_faults_end_as_soon_as_applied(tmp_path: Path) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    plan = Plan(1, "t", (Step(0, "move", "pod-0", Trigger(0.0), {"keep_volume": False}),))
    nemesis, ops = _run(plan, platform, 0.3)
    assert platform.calls == [("move-empty", "pod-0")]
    assert [op[3]["phase"] for op in ops] == ["start", "end"]
    assert nemesis.outcomes[0].status == "healed"


def _write_trace(platform: RecordingPlatform, pod: str, events: list[dict[str, Any]]) -> None:
    trace = platform.trace_path(pod)
    trace.parent.mkdir(parents=True, exist_ok=True)
    with trace.open("a") as out:
        for n, event in enumerate(events):
            out.write(json.dumps({"ts_ns": 1000 + n, **event}) + "\n")


def test_cleaned_pairs_a_standby_lock_failure_with_a_later_delete_in_that_process(
    tmp_path: Path,
) -> None:
    platform = RecordingPlatform(tmp_path, ["pod-0", "pod-1"])
    watcher = TraceWatcher(platform, "app")
    failed = {"event": "lock-failed", "kind": "standby", "task": "0_6"}
    deleted = {"event": "cleaner-delete", "task": "0_6"}
    _write_trace(platform, "pod-0", [
        {**deleted, "pid": 1},  # before any lock failure: an ordinary clean-up
        {**failed, "pid": 1},
        {**deleted, "pid": 2},  # another process of the pod: not that standby's directory
        {"event": "lock-failed", "kind": "active", "task": "0_1", "pid": 1},
        {"event": "cleaner-delete", "task": "0_1", "pid": 1},  # an active's lock: not 8187
    ])
    _write_trace(platform, "pod-1", [{**deleted, "pid": 1}])  # another pod's process
    assert watcher.contended(0) == 1
    assert watcher.cleaned(0) == 0
    assert not watcher.holds("cleaned", "pod-0", 0, 1)
    _write_trace(platform, "pod-0", [{**deleted, "pid": 1}])
    assert watcher.cleaned(0) == 1
    assert watcher.holds("cleaned", "pod-1", 0, 1)  # any pod's trace counts
    assert watcher.contended(10**9) == 0  # only what happened since the step was armed


def test_cleaned_holds_on_the_legacy_apps_own_lines(tmp_path: Path) -> None:
    """The Kafka Streams 2.x app's events as it writes them (LogTrace.java, from the
    release's log lines; these three from the 2.2.1 run 20261126T100447, pod-0): the
    standby's lock failure, then the cleaner's deletion of its directory."""
    platform = RecordingPlatform(tmp_path, ["pod-0"])
    watcher = TraceWatcher(platform, "app")
    trace = platform.trace_path("pod-0")
    trace.parent.mkdir(parents=True, exist_ok=True)
    trace.write_text(
        '{"ts_ns":1795687552565743309,"pod":"pod-0","pid":26587,"thread":"cleaner",'
        '"event":"cleaner-delete","task":"0_5","age_s":1.795687552565E9}\n'
        '{"ts_ns":1795687629518469680,"pod":"pod-0","pid":26587,"thread":"StreamThread-1",'
        '"event":"lock-failed","task":"0_5","kind":"standby"}\n')
    assert watcher.contended(0) == 1 and watcher.cleaned(0) == 0
    with trace.open("a") as out:
        out.write('{"ts_ns":1795687633552789819,"pod":"pod-0","pid":26587,"thread":"cleaner",'
                  '"event":"cleaner-delete","task":"0_5","age_s":1.795687633552E9}\n')
    assert watcher.holds("cleaned", "pod-0", 1795687600000000000, 1)
