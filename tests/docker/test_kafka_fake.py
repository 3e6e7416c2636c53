"""DockerKafka's bookkeeping against the fake docker client (no engine, no broker: the
readiness call is replaced by the set of brokers the test says are registered)."""

from __future__ import annotations

from pathlib import Path

import pytest
from docker_fakes import FakeClient

from harness.errors import HarnessError, UsageError
from harness.platforms import docker_kafka
from harness.platforms.docker import DockerKafka
from harness.platforms.docker_specs import kafka_container_name


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> set[int]:
    brokers: set[int] = set()
    monkeypatch.setattr(docker_kafka, "describe_brokers", lambda bootstrap: set(brokers))
    return brokers


def cluster(tmp_path: Path, fake: FakeClient, size: int) -> DockerKafka:
    return DockerKafka(tmp_path, "r1", size, client=fake,  # type: ignore[arg-type]
                       image="kchaos-kafka:test")


def test_three_brokers_start_on_the_run_network(tmp_path: Path, registered: set[int]) -> None:
    fake = FakeClient()
    kafka = cluster(tmp_path, fake, 3)
    registered |= {1, 2, 3}
    kafka.start(timeout_s=5)
    names = [c.name for c in fake.containers.started]
    assert names == [kafka_container_name("r1", n) for n in (1, 2, 3)]
    assert all(c.spec["network"] == "kchaos-r1" for c in fake.containers.started)
    assert "kchaos-r1" in fake.networks.items
    ports = list(kafka.host_ports.values())
    assert kafka.bootstrap == ",".join(f"127.0.0.1:{port}" for port in ports)
    assert kafka.internal_bootstrap == ",".join(f"{name}:19092" for name in names)
    cluster_ids = {c.spec["environment"]["CLUSTER_ID"] for c in fake.containers.started}
    assert cluster_ids == {kafka.cluster_id}


def test_kill_restart_and_stop(tmp_path: Path, registered: set[int]) -> None:
    fake = FakeClient()
    kafka = cluster(tmp_path, fake, 1)
    registered.add(1)
    kafka.start(timeout_s=5)
    (container,) = fake.containers.started
    kafka.kill_broker(1)
    assert container.calls == [("kill", "SIGKILL")] and container.status == "exited"
    kafka.kill_broker(1)  # a dead broker: nothing to do, no error
    assert kafka.running_ids() == set()
    kafka.restart_broker(1, timeout_s=5)
    assert container.calls[-1] == ("start",) and kafka.running_ids() == {1}
    kafka.stop()
    assert ("stop", 30, "running") in container.calls and container.removed
    assert (tmp_path / "kafka" / "broker-1.log").read_text().startswith("output of")
    assert "kchaos-r1" not in fake.networks.items


def test_a_broker_that_dies_at_start_fails_the_start(tmp_path: Path,
                                                     registered: set[int]) -> None:
    fake = FakeClient()
    fake.containers.exit_at_start.add(kafka_container_name("r1", 1))
    kafka = cluster(tmp_path, fake, 1)
    with pytest.raises(HarnessError, match=r"exited at start: see .*broker-1\.log"):
        kafka.start(timeout_s=5)


def test_not_ready_in_time(tmp_path: Path, registered: set[int]) -> None:
    kafka = cluster(tmp_path, FakeClient(), 1)
    with pytest.raises(HarnessError, match=r"not ready after 1s \(brokers registered: \[\]\)"):
        kafka.start(timeout_s=1)


def test_sizes_and_ids(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="1 or 3"):
        cluster(tmp_path, FakeClient(), 2)
    with pytest.raises(HarnessError, match="no broker 4"):
        cluster(tmp_path, FakeClient(), 3).kill_broker(4)
