"""DockerPlatform's bookkeeping against a fake docker client (no engine): which engine
calls each fault makes, which volume a pod gets, what poll() reports, where logs go."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from docker_fakes import FakeClient

from harness.errors import HarnessError
from harness.platforms.docker import DockerPlatform
from harness.sut.base import PodSettings

WORKER = PodSettings(bootstrap="127.0.0.1:9092", application_id="ledger-app", threads=1,
                      standbys=0, guarantee="exactly_once_v2")


@pytest.fixture
def fake() -> FakeClient:
    return FakeClient()


def platform(tmp_path: Path, fake: FakeClient, **kwargs: Any) -> DockerPlatform:
    return DockerPlatform(tmp_path / "run-1", WORKER, 3, client=fake,  # type: ignore[arg-type]
                          image="kchaos-worker:test", user="1000:1000", **kwargs)


def test_add_pod_starts_a_container_on_a_fresh_volume(tmp_path: Path, fake: FakeClient) -> None:
    p = platform(tmp_path, fake, bootstrap="kchaos-run-1-kafka-1:19092")
    pod = p.add_pod("pod-0", "node-1")
    (container,) = fake.containers.started
    assert pod.running and pod.incarnation == 1 and pod.pid == container.attrs["State"]["Pid"]
    assert container.labels["kchaos.node"] == "node-1"
    assert container.spec["network"] == "kchaos-run-1" and "kchaos-run-1" in fake.networks.items
    assert container.spec["command"][1] == "kchaos-run-1-kafka-1:19092"  # bootstrap override
    volume = fake.volumes.get("kchaos-run-1-pod-0-g0")
    assert volume.spec["driver_opts"]["device"] == str(p.volume("pod-0"))
    assert p.volume("pod-0") == tmp_path / "run-1" / "volumes" / "kchaos-run-1-pod-0-g0"
    assert p.volume("pod-0").is_dir() and p.pod_dir("pod-0").is_dir()
    assert p.trace_path("pod-0") == tmp_path / "run-1" / "pods" / "pod-0" / "trace.jsonl"
    assert p.control_path("pod-0").name == "control.json"
    with pytest.raises(HarnessError):
        p.add_pod("pod-0", "node-1")
    with pytest.raises(HarnessError):
        p.add_pod("pod-1", "node-9")


def test_kill_is_sigkill_and_not_a_death_to_report(tmp_path: Path, fake: FakeClient) -> None:
    p = platform(tmp_path, fake)
    p.add_pod("pod-0", "node-0")
    container = fake.containers.started[0]
    p.kill_pod("pod-0")
    assert container.calls == [("kill", "SIGKILL")]
    pod = p.pod("pod-0")
    assert not pod.running and pod.pid is None and pod.exit_codes == [137]
    assert container.removed
    log = (p.pod_dir("pod-0") / "worker.log").read_text()
    assert f"output of {container.name}" in log and "exited with code 137" in log
    assert p.poll() == []  # the nemesis's kill is in the history already
    p.kill_pod("pod-0")  # killing a dead pod is a no-op
    p.start_pod("pod-0")
    assert p.pod("pod-0").incarnation == 2 and len(fake.containers.started) == 2
    assert fake.containers.started[1].spec["volumes"] == container.spec["volumes"]


def test_poll_reports_a_pod_that_exited_by_itself(tmp_path: Path, fake: FakeClient) -> None:
    p = platform(tmp_path, fake)
    p.add_pod("pod-0", "node-0")
    p.add_pod("pod-1", "node-1")
    assert p.poll() == []
    fake.containers.started[1].exit(1)
    assert p.poll() == [("pod-1", 1)]
    assert p.poll() == []
    assert not p.pod("pod-1").running and p.pod("pod-1").exit_codes == [1]
    assert "exited with code 1" in (p.pod_dir("pod-1") / "worker.log").read_text()


def test_pause_resume_and_stop_of_a_paused_pod(tmp_path: Path, fake: FakeClient) -> None:
    p = platform(tmp_path, fake)
    p.add_pod("pod-0", "node-0")
    container = fake.containers.started[0]
    p.pause_pod("pod-0")
    p.pause_pod("pod-0")  # once is enough
    assert p.pod("pod-0").paused and container.status == "paused"
    p.resume_pod("pod-0")
    assert not p.pod("pod-0").paused and container.status == "running"
    p.pause_pod("pod-0")
    p.stop_pod("pod-0", grace_s=7.5)
    # Thawed first, so SIGTERM reaches a worker that can close cleanly.
    assert container.calls == [("pause",), ("unpause",), ("pause",), ("unpause",),
                               ("stop", 8, "running")]
    assert p.pod("pod-0").exit_codes == [0]


def test_kill_of_a_paused_pod_is_still_sigkill(tmp_path: Path, fake: FakeClient) -> None:
    p = platform(tmp_path, fake)
    p.add_pod("pod-0", "node-0")
    container = fake.containers.started[0]
    p.pause_pod("pod-0")
    p.kill_pod("pod-0")
    assert container.calls == [("pause",), ("kill", "SIGKILL")]
    assert p.pod("pod-0").exit_codes == [137]


def _pod_with_state(tmp_path: Path, fake: FakeClient) -> tuple[DockerPlatform, Path]:
    """pod-0 on node-0, a marker file in its volume; the platform and that volume."""
    p = platform(tmp_path, fake)
    p.add_pod("pod-0", "node-0")
    volume = p.volume("pod-0")
    (volume / "marker").write_text("state")
    return p, volume


def test_move_with_volume_keeps_it(tmp_path: Path, fake: FakeClient) -> None:
    p, before = _pod_with_state(tmp_path, fake)
    p.move_pod("pod-0", "node-2", keep_volume=True)
    first, second = fake.containers.started
    assert ("stop", 30, "running") in first.calls  # stopped gracefully, then moved
    assert second.labels["kchaos.node"] == "node-2" and p.pod("pod-0").node == "node-2"
    assert second.labels["kchaos.volume"] == "kchaos-run-1-pod-0-g0"
    assert p.volume("pod-0") == before and (before / "marker").exists()


def test_move_without_volume_starts_empty(tmp_path: Path, fake: FakeClient) -> None:
    p, before = _pod_with_state(tmp_path, fake)
    p.move_pod("pod-0", "node-1", keep_volume=False)
    after = p.volume("pod-0")
    assert after != before and not any(after.iterdir())
    assert (before / "marker").exists()  # left behind, like a detached volume
    second = fake.containers.started[1]
    assert second.labels["kchaos.volume"] == "kchaos-run-1-pod-0-g1"
    assert "kchaos-run-1-pod-0-g1" in second.spec["volumes"]
    with pytest.raises(HarnessError):
        p.move_pod("pod-0", "node-7", keep_volume=False)


def test_engine_volumes_answer_their_mountpoint(tmp_path: Path, fake: FakeClient) -> None:
    p = platform(tmp_path, fake, host_volumes=False)
    p.add_pod("pod-0", "node-0")
    volume = fake.volumes.get("kchaos-run-1-pod-0-g0")
    assert "driver_opts" not in volume.spec
    assert p.volume("pod-0") == Path("/var/lib/docker/volumes/kchaos-run-1-pod-0-g0/_data")


def test_remove_and_teardown(tmp_path: Path, fake: FakeClient) -> None:
    p = platform(tmp_path, fake)
    for n in range(3):
        p.add_pod(f"pod-{n}", f"node-{n}")
    p.remove_pod("pod-2")
    assert [pod.name for pod in p.pods()] == ["pod-0", "pod-1"]
    fake.containers.started[1].exit(3)  # died just before teardown
    p.teardown()
    assert all(c.removed for c in fake.containers.started)
    assert fake.containers.started[0].calls == [("stop", 10, "running")]
    assert not fake.volumes.items  # the objects; the data stays in the run folder
    assert (tmp_path / "run-1" / "volumes" / "kchaos-run-1-pod-0-g0").is_dir()
    assert "kchaos-run-1" not in fake.networks.items
    with pytest.raises(HarnessError):
        p.pod("pod-2")


def test_the_restart_policy_needs_no_docker_code(tmp_path: Path, fake: FakeClient) -> None:
    from harness.platforms.supervised import RestartPolicy, SupervisedPlatform

    now = [100.0]
    ops: list[tuple[str, dict[str, Any]]] = []
    sup = SupervisedPlatform(platform(tmp_path, fake), RestartPolicy(backoff_s=1.0),
                             lambda _p, _t, f, value: ops.append((f, value)),
                             clock=lambda: now[0])
    sup.add_pod("pod-0", "node-0")
    now[0] = 120.0
    fake.containers.started[0].exit(1)
    sup.tick()
    now[0] = 121.0
    sup.tick()
    assert len(fake.containers.started) == 2 and sup.pod("pod-0").incarnation == 2
    sup.kill_pod("pod-0")
    now[0] = 123.0
    sup.tick()
    assert len(fake.containers.started) == 3 and sup.pod("pod-0").running
    assert [(f, v.get("cause")) for f, v in ops] == [
        ("pod-exited", "crashed"), ("pod-restarted", None),
        ("pod-exited", "nemesis-kill"), ("pod-restarted", None)]
    sup.teardown()
    assert not sup.pod("pod-0").running
