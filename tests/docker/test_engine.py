"""The docker platform against a real engine: brokers and pods as containers, SIGKILL
through the engine, volumes that move or stay. Skipped, with the reason, without one.

The first run builds the worker image from the repo's Dockerfile (minutes: pip installs
the project's dependencies); later runs reuse it until the sources change."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import docker
import pytest

from common.waiting import wait_until
from harness.kafka.cluster import describe_brokers
from harness.kafka.jars import kafka_version
from harness.platforms.docker import (
    DockerKafka,
    DockerPlatform,
    cleanup_run,
    ensure_kafka_image,
    ensure_worker_image,
    require_engine,
)
from harness.platforms.docker_images import build_client
from harness.platforms.docker_network import DockerNetwork
from harness.run.topics import create_topics
from harness.sut.base import PodSettings

pytestmark = pytest.mark.docker
APP = "ledger-app"


def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    if not wait_until(condition, timeout_s):
        raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


def trace(p: DockerPlatform, pod: str) -> list[dict[str, Any]]:
    path = p.trace_path(pod)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def running(p: DockerPlatform, pod: str, incarnation_pids: set[int] | None = None) -> bool:
    """The pod's current process reached RUNNING (a pid not seen before, if given)."""
    events = [e for e in trace(p, pod) if e.get("event") == "client-state"]
    fresh = [e for e in events if incarnation_pids is None or e["pid"] not in incarnation_pids]
    return any(e.get("to") == "RUNNING" for e in fresh)


@pytest.fixture(scope="module")
def kafka(engine: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
          ) -> Iterator[DockerKafka]:
    run_id = f"test-{uuid.uuid4().hex[:8]}"
    cluster = DockerKafka(tmp_path_factory.mktemp("docker-kafka"), run_id, 1, client=engine)
    try:
        cluster.start()
        create_topics(cluster.bootstrap, 4, replication=1)
        yield cluster
    finally:
        cluster.stop()
        cleanup_run(engine, run_id)


@pytest.fixture(scope="module")
def worker_image(engine: docker.DockerClient) -> str:
    return ensure_worker_image(build_client())


@pytest.fixture
def platform(engine: docker.DockerClient, kafka: DockerKafka, worker_image: str,
             tmp_path: Path) -> Iterator[DockerPlatform]:
    worker = PodSettings(bootstrap=kafka.internal_bootstrap, application_id=APP, threads=1,
                          standbys=0, guarantee="exactly_once_v2")
    run_dir = tmp_path / f"run-{uuid.uuid4().hex[:8]}"
    p = DockerPlatform(run_dir, worker, 3, client=engine, image=worker_image,
                       network=kafka.network)
    try:
        yield p
    finally:
        p.teardown()
        cleanup_run(engine, p.run_id)


def test_require_engine_passes(engine: docker.DockerClient) -> None:
    require_engine()  # raises UsageError when nothing answers: here something does
    assert engine.ping() is True
    assert engine.version()["ApiVersion"]


def test_images_are_built_here_from_the_pinned_jars(engine: docker.DockerClient,
                                                     worker_image: str) -> None:
    kafka_tag = ensure_kafka_image(engine)
    assert kafka_tag == f"kchaos-kafka:{kafka_version()}"
    jars = output_of(engine, kafka_tag, ["ls", "/opt/kafka/libs"])
    assert f"kafka-clients-{kafka_version()}.jar" in jars
    # The worker image has the worker's dependencies, not the harness's.
    probe = ("import importlib.util as u, kafka, rocksdict; "
             "print([m for m in ('pyspark', 'plotly', 'harness') if u.find_spec(m)])")
    assert output_of(engine, worker_image, ["python", "-c", probe]).strip() == "[]"


def output_of(engine: docker.DockerClient, image: str, argv: list[str]) -> str:
    """What a one-off container of the image prints. Removed with its anonymous volumes
    (both images declare a VOLUME), which `containers.run(remove=True)` would leave."""
    container = engine.containers.run(image, entrypoint=argv, detach=True)
    try:
        engine_wait = container.wait(timeout=120)
        assert engine_wait["StatusCode"] == 0, container.logs().decode()
        return str(container.logs(stdout=True, stderr=False).decode())
    finally:
        container.remove(force=True, v=True)


def test_broker_container_answers_and_survives_sigkill(kafka: DockerKafka) -> None:
    assert describe_brokers(kafka.bootstrap) == {1}
    kafka.kill_broker(1)
    container = kafka._containers[1]
    container.reload()
    assert container.status == "exited"
    assert container.attrs["State"]["ExitCode"] == 137
    kafka.restart_broker(1)  # same container, same data, same port
    assert describe_brokers(kafka.bootstrap) == {1}


def test_kill_is_exit_137_and_move_keeps_or_drops_the_volume(
    platform: DockerPlatform, engine: docker.DockerClient
) -> None:
    p = platform
    p.add_pod("pod-0", "node-0")
    wait_for(lambda: running(p, "pod-0"), 120, "pod-0 RUNNING")
    seen = {e["pid"] for e in trace(p, "pod-0")}

    p.kill_pod("pod-0")
    assert p.pod("pod-0").exit_codes == [137]
    assert p.poll() == []  # a nemesis kill is not a death to report
    assert "exited with code 137" in (p.pod_dir("pod-0") / "worker.log").read_text()
    ours = [f"kchaos.run={p.run_id}", "kchaos.pod=pod-0"]
    assert not engine.containers.list(all=True, filters={"label": ours})  # removed

    marker = p.volume("pod-0") / "marker"
    marker.write_text("left by the first incarnation")
    p.move_pod("pod-0", "node-1", keep_volume=True)
    wait_for(lambda: running(p, "pod-0", seen), 120, "pod-0 RUNNING again")
    assert marker.exists()
    (container,) = engine.containers.list(filters={"label": f"kchaos.run={p.run_id}"})
    assert container.labels["kchaos.node"] == "node-1"
    # In the host PID namespace each incarnation has its own PID (the trace contract).
    seen_now = {e["pid"] for e in trace(p, "pod-0")}
    assert len(seen_now) == 2

    p.kill_pod("pod-0")
    p.move_pod("pod-0", "node-2", keep_volume=False)
    assert p.volume("pod-0") != marker.parent
    assert not (p.volume("pod-0") / "marker").exists()
    assert marker.exists()  # the old volume stays where it was
    wait_for(lambda: running(p, "pod-0", seen_now), 120, "pod-0 RUNNING on an empty volume")
    assert (p.volume("pod-0") / APP).is_dir()  # its state dir is the new volume


def test_pause_resume_and_graceful_stop(platform: DockerPlatform,
                                        engine: docker.DockerClient) -> None:
    p = platform
    p.add_pod("pod-0", "node-0")
    wait_for(lambda: running(p, "pod-0"), 120, "pod-0 RUNNING")
    (container,) = engine.containers.list(filters={"label": f"kchaos.run={p.run_id}"})
    p.pause_pod("pod-0")
    container.reload()
    assert container.status == "paused"
    p.resume_pod("pod-0")
    container.reload()
    assert container.status == "running"
    p.pause_pod("pod-0")
    p.stop_pod("pod-0")  # thawed, then SIGTERM: a clean close
    assert p.pod("pod-0").exit_codes == [0]
    states = [e["to"] for e in trace(p, "pod-0") if e.get("event") == "client-state"]
    assert states[-1] == "NOT_RUNNING"


def test_poll_reports_a_pod_that_exits_by_itself(platform: DockerPlatform) -> None:
    p = platform
    p.worker = replace(p.worker, extra_args=("--threads", "0"))
    p.add_pod("bad", "node-0")  # the worker refuses --threads 0 and exits 2
    reported: list[tuple[str, int]] = []
    wait_for(lambda: bool(reported.extend(p.poll()) or reported), 60, "the pod to exit")
    assert reported == [("bad", 2)]
    assert not p.pod("bad").running
    assert "--threads must be >= 1" in (p.pod_dir("bad") / "worker.log").read_text()


def test_partition_cuts_a_pod_off_and_heals(platform: DockerPlatform, kafka: DockerKafka,
                                            engine: docker.DockerClient) -> None:
    p = platform
    network = DockerNetwork(engine, p.network, p, kafka)
    p.add_pod("pod-0", "node-0")
    wait_for(lambda: running(p, "pod-0"), 120, "pod-0 RUNNING")
    container = p.pod_container("pod-0")
    network.disconnect("pod-0")
    container.reload()
    assert p.network not in container.attrs["NetworkSettings"]["Networks"]
    network.reconnect("pod-0")
    network.reconnect("pod-0")  # healing twice is healing once
    container.reload()
    assert p.network in container.attrs["NetworkSettings"]["Networks"]
    assert container.status == "running"  # the same process, cut off and back


def test_partition_of_a_broker_heals_with_its_published_port(
    kafka: DockerKafka, engine: docker.DockerClient
) -> None:
    network = DockerNetwork(engine, kafka.network, kafka=kafka)
    network.disconnect("broker-1")
    with pytest.raises(Exception):  # noqa: B017  # cut off: the harness cannot reach it
        describe_brokers(kafka.bootstrap)
    network.reconnect("broker-1")
    wait_for(lambda: _answers(kafka.bootstrap), 60, "the broker through its port again")


def _answers(bootstrap: str) -> bool:
    try:
        return describe_brokers(bootstrap) == {1}
    except Exception:
        return False
