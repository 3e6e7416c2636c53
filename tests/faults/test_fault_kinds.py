"""Each fault does to a real pod (a worker process on the session broker) what it says."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import NewTopic

from common.waiting import wait_until
from faults.context import FaultContext
from faults.kinds import FAULT_KINDS
from faults.model import Step, Trigger
from faults.observe import TraceWatcher
from harness.platforms.local import LocalPlatform
from harness.procs import ProcessRegistry
from harness.run.topics import GroupMembers
from harness.sut.base import PodSettings
from harness.sut.python import PythonWorker
from workloads.ledger.accounts import AccountsWriter
from workloads.ledger.contract import Event, account_name

pytestmark = pytest.mark.kafka


class Fleet:
    """One pod on its own topics and application id, so tests never share state."""

    def __init__(self, bootstrap: str, run_dir: Path) -> None:
        tag = uuid.uuid4().hex[:6]
        self.topics = {"input": f"in-{tag}", "output": f"out-{tag}", "accounts": f"acc-{tag}"}
        admin = KafkaAdminClient(bootstrap_servers=bootstrap)
        admin.create_topics([
            NewTopic(self.topics["input"], 2, 1), NewTopic(self.topics["output"], 2, 1),
            NewTopic(self.topics["accounts"], 1, 1, topic_configs={"cleanup.policy": "compact"}),
        ])
        admin.close()
        writer = AccountsWriter(bootstrap, 4, 1, topic=self.topics["accounts"])
        writer.publish_all()
        writer.close()
        self.bootstrap = bootstrap
        self.app = f"app-{tag}"
        self.registry = ProcessRegistry(run_dir)
        worker = PodSettings(
            bootstrap=bootstrap, application_id=self.app, threads=1, standbys=0,
            guarantee="exactly_once_v2",
            extra_args=("--input-topic", self.topics["input"], "--output-topic",
                        self.topics["output"], "--accounts-topic", self.topics["accounts"]),
        )
        self.platform = LocalPlatform(run_dir, self.registry, PythonWorker(), worker, node_count=2)
        self.watcher = TraceWatcher(self.platform, self.app)
        self.ctx = FaultContext(platform=self.platform, application_id=self.app,
                                group=GroupMembers(bootstrap, self.app))
        self.sent = 0

    def produce(self, n: int) -> None:
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all")
        for _ in range(n):
            event = Event(f"e-{self.sent}", account_name(self.sent % 4), 1)
            producer.send(self.topics["input"], key=event.account.encode(), value=event.encode())
            self.sent += 1
        producer.flush()
        producer.close()

    def events(self, pod: str, name: str, pid: int | None = None) -> list[dict[str, Any]]:
        return [e for e in self.watcher.events(pod)
                if e.get("event") == name and (pid is None or e.get("pid") == pid)]

    def wait_for(self, what: str, predicate: Any, timeout_s: float = 90) -> None:
        if not wait_until(predicate, timeout_s, interval_s=0.3):
            raise AssertionError(f"timed out waiting for {what}")

    def wait_running(self, pod: str) -> int:
        pid = self.platform.pod(pod).pid
        self.wait_for(f"{pod} RUNNING", lambda: any(
            e.get("to") == "RUNNING" for e in self.events(pod, "client-state", pid)))
        assert pid is not None
        return pid

    def wait_committed(self, pod: str, pid: int) -> None:
        self.wait_for("a commit with records", lambda: any(
            e.get("records", 0) > 0 for e in self.events(pod, "txn-commit", pid)))

    def apply(self, fault: str, target: str = "pod-0", **params: Any) -> dict[str, Any]:
        return FAULT_KINDS[fault].apply(self.ctx, Step(0, fault, target, Trigger(0), params))

    def heal(self, fault: str, target: str = "pod-0", **params: Any) -> dict[str, Any]:
        return FAULT_KINDS[fault].heal(self.ctx, Step(0, fault, target, Trigger(0), params))


@pytest.fixture
def fleet(kafka_bootstrap: str, tmp_path: Path) -> Iterator[Fleet]:
    fleet = Fleet(kafka_bootstrap, tmp_path)
    try:
        yield fleet
    finally:
        fleet.registry.stop_all(grace_s=5)


def test_kill_leaves_no_clean_close_and_heal_restarts(fleet: Fleet) -> None:
    fleet.platform.add_pod("pod-0", "node-0")
    pid = fleet.wait_running("pod-0")
    killed_ns = time.time_ns()
    fleet.apply("kill")
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    states = [e["to"] for e in fleet.events("pod-0", "client-state", pid)]
    assert "PENDING_SHUTDOWN" not in states
    # A rebalance while the pod's threads join one by one suspends tasks before the kill;
    # a clean close would checkpoint after it.
    closing = {"close", "suspend"}
    assert not [e for e in fleet.events("pod-0", "checkpoint-write", pid)
                if e["reason"] in closing and e["ts_ns"] >= killed_ns]
    fleet.heal("kill")
    assert fleet.wait_running("pod-0") != pid


def test_stop_is_a_clean_close(fleet: Fleet) -> None:
    fleet.platform.add_pod("pod-0", "node-0")
    pid = fleet.wait_running("pod-0")
    fleet.apply("stop")
    states = [e["to"] for e in fleet.events("pod-0", "client-state", pid)]
    assert states[-1] == "NOT_RUNNING"
    assert [e for e in fleet.events("pod-0", "checkpoint-write", pid) if e["reason"] == "close"]


def test_pause_stops_the_process_until_resumed(fleet: Fleet) -> None:
    fleet.platform.add_pod("pod-0", "node-0")
    pid = fleet.wait_running("pod-0")
    fleet.apply("pause")
    assert psutil.Process(pid).status() == psutil.STATUS_STOPPED
    fleet.heal("pause")
    assert psutil.Process(pid).status() != psutil.STATUS_STOPPED


def test_move_without_volume_starts_empty_and_with_volume_keeps_state(fleet: Fleet) -> None:
    fleet.platform.add_pod("pod-0", "node-0")
    pid = fleet.wait_running("pod-0")
    fleet.produce(40)
    fleet.wait_committed("pod-0", pid)

    details = fleet.apply("move", keep_volume=True)
    assert details == {"from": "node-0", "to": "node-1"}
    pid = fleet.wait_running("pod-0")
    inits = fleet.events("pod-0", "task-init", pid)
    assert inits and any(e["entries"] > 0 for e in inits), "the volume came along"

    fleet.apply("move", keep_volume=False)
    assert fleet.platform.pod("pod-0").node == "node-0"
    pid = fleet.wait_running("pod-0")
    inits = fleet.events("pod-0", "task-init", pid)
    assert inits and all(e["entries"] == 0 and e["checkpoint"] is None for e in inits)
    assert (fleet.platform.run_dir / "nodes" / "node-1" / "pod-0.left-0").exists()


def test_delay_checkpoint_delays_the_write(fleet: Fleet) -> None:
    fleet.platform.add_pod("pod-0", "node-0")
    pid = fleet.wait_running("pod-0")
    fleet.apply("delay-checkpoint", ms=1500)
    fleet.platform.stop_pod("pod-0")
    delays = fleet.events("pod-0", "checkpoint-delay", pid)
    writes = fleet.events("pod-0", "checkpoint-write", pid)
    assert delays and all(d["delay_ms"] == 1500 for d in delays)
    # Each delayed write lands at least the delay after its announcement.
    for delay in delays:
        write = next(w for w in writes if w["thread"] == delay["thread"]
                     and w.get("task") == delay.get("task") and w["ts_ns"] >= delay["ts_ns"])
        assert write["ts_ns"] - delay["ts_ns"] >= 1500 * 1_000_000
    fleet.heal("delay-checkpoint")
    fleet.platform.start_pod("pod-0")
    pid = fleet.wait_running("pod-0")
    fleet.platform.stop_pod("pod-0")
    assert not fleet.events("pod-0", "checkpoint-delay", pid)


def test_delay_checkpoint_for_some_reasons_leaves_the_others_alone(fleet: Fleet) -> None:
    fleet.platform.add_pod("pod-0", "node-0")
    pid = fleet.wait_running("pod-0")
    fleet.produce(20)
    fleet.wait_committed("pod-0", pid)
    fleet.apply("delay-checkpoint", ms=800, reasons=["close"])
    fleet.platform.stop_pod("pod-0")  # tasks write `suspend`, the global store `close`
    delays = fleet.events("pod-0", "checkpoint-delay", pid)
    reasons = {w["reason"] for w in fleet.events("pod-0", "checkpoint-write", pid)}
    assert delays and {d["reason"] for d in delays} == {"close"}
    assert "suspend" in reasons, reasons
    fleet.heal("delay-checkpoint")


def test_scale_out_adds_a_pod_and_heal_stops_it(fleet: Fleet) -> None:
    fleet.platform.add_pod("pod-0", "node-0")
    fleet.wait_running("pod-0")
    fleet.apply("scale-out", target="pod-1")
    fleet.wait_running("pod-1")
    assert {p.name for p in fleet.platform.pods() if p.running} == {"pod-0", "pod-1"}
    fleet.heal("scale-out", target="pod-1")
    assert not fleet.platform.pod("pod-1").running


def _instance_ids(fleet: Fleet) -> set[str]:
    admin = KafkaAdminClient(bootstrap_servers=fleet.bootstrap)
    try:
        members = admin.describe_groups([fleet.app]).get(fleet.app, {}).get("members") or []
    finally:
        admin.close()
    return {str(m.get("group_instance_id")) for m in members}


def test_scale_in_leaves_the_group_and_stop_does_not(fleet: Fleet) -> None:
    """A pod scaled in on purpose takes its static members out of the group at once; a
    stopped one (a restart on its way) keeps them until its session times out."""
    for pod, node in (("pod-0", "node-0"), ("pod-1", "node-1")):
        fleet.platform.add_pod(pod, node)
        fleet.wait_running(pod)
    fleet.wait_for("both pods in the group", lambda: all(
        any(i.startswith(f"{pod}-") for i in _instance_ids(fleet)) for pod in ("pod-0", "pod-1")))
    fleet.apply("stop", target="pod-0")
    assert any(i.startswith("pod-0-") for i in _instance_ids(fleet))
    details = fleet.apply("scale-in", target="pod-1")
    assert details["left_group"] and all(i.startswith("pod-1-") for i in details["left_group"])
    ids = _instance_ids(fleet)
    assert not any(i.startswith("pod-1-") for i in ids), ids
    assert any(i.startswith("pod-0-") for i in ids), ids


@pytest.mark.needs("cc")
def test_clock_jumps_the_pods_wall_clock_and_heal_steps_it_back(fleet: Fleet) -> None:
    from harness.platforms.clock import clock_shim

    fleet.platform.clock_shim = clock_shim()  # as for a plan with a clock fault
    fleet.platform.add_pod("pod-0", "node-0")
    pid = fleet.wait_running("pod-0")

    def lines_after(ns: int) -> list[dict[str, Any]]:
        return [e for e in fleet.watcher.events("pod-0") if e.get("pid") == pid
                and e["ts_ns"] > ns]

    applied = fleet.apply("clock", jump_s=-3600.0)
    assert applied["jump_s"] == -3600.0
    fleet.produce(20)  # the pod traces its work on its own clock: an hour behind
    fleet.wait_for("a line an hour behind", lambda: any(
        abs(e["ts_ns"] - (time.time_ns() - 3600 * 10**9)) < 60 * 10**9
        for e in fleet.watcher.events("pod-0") if e.get("pid") == pid))
    healed = fleet.heal("clock")
    assert healed["offset_s"] == -3600.0
    back = time.time_ns() - 10**9
    fleet.produce(20)
    fleet.wait_for("a line on the true clock again", lambda: bool(lines_after(back)))
    assert fleet.platform.pod("pod-0").pid == pid  # the same process all along
