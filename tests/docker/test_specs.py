"""The container specs the docker platform builds, checked without an engine: as data, and
through the docker SDK's own translation into the engine's create-container payload."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest
from docker.constants import DEFAULT_DOCKER_API_VERSION
from docker.models.containers import _create_container_args

from harness.errors import UsageError
from harness.kafka.cluster import BrokerNode, broker_properties
from harness.platforms.docker import (
    kafka_container_spec,
    pod_container_spec,
    pod_volume_spec,
    require_engine,
)
from harness.platforms.docker_specs import (
    CONTAINER_PATHS,
    KAFKA_DATA_DIR,
    POD_MOUNT,
    STATE_MOUNT,
    kafka_container_name,
    property_env,
    safe_name,
    worker_image_tag,
)
from harness.sut.base import CONTAINER_APP_DIR, PodPaths, PodSettings
from harness.sut.kstreams import KafkaStreamsApp
from harness.sut.python import PythonWorker

WORKER = PodSettings(bootstrap="kchaos-r1-kafka-1:19092", application_id="ledger-app",
                      threads=2, standbys=1, guarantee="exactly_once_v2", bugs=("KAFKA-20685",))


def engine_payload(spec: dict[str, Any]) -> dict[str, Any]:
    """What containers.run would send to the engine (the SDK's private converter, pinned
    docker==7.1.0): unknown kwargs raise TypeError, as run() would."""
    return _create_container_args({**spec, "version": DEFAULT_DOCKER_API_VERSION})


def pod_spec(tmp_path: Path, **overrides: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "run_id": "r1", "pod": "pod-0", "node": "node-1", "worker_config": WORKER,
        "image": "kchaos-worker:abc", "network": "kchaos-r1",
        "volume_name": "kchaos-r1-pod-0-g0", "pod_dir": tmp_path / "pods" / "pod-0",
        "incarnation": 3, "user": "1000:1000",
    }
    return pod_container_spec(**{**args, **overrides})


def test_pod_command_is_worker_argv_with_container_paths(tmp_path: Path) -> None:
    spec = pod_spec(tmp_path)
    assert spec["command"] == WORKER.argv(
        "pod-0", PodPaths(STATE_MOUNT, f"{POD_MOUNT}/trace.jsonl", f"{POD_MOUNT}/control.json")
    )
    assert "entrypoint" not in spec  # the image's: python -m workloads.worker


def test_a_java_pod_runs_its_whole_java_command_from_the_image(tmp_path: Path) -> None:
    """A Kafka Streams SUT's container: the jvm-app image (no entrypoint), `java` from the
    image's runtime, its jars under CONTAINER_APP_DIR, the same pod flags as the worker."""
    app = KafkaStreamsApp("4.2.2", ("max.poll.records=50",))
    command = app.container_command(WORKER, "pod-0", CONTAINER_PATHS)
    assert command[:5] == ["java", "-Xms64m", "-Xmx384m", "-cp", f"{CONTAINER_APP_DIR}/*"]
    assert command[6:-2] == WORKER.argv("pod-0", CONTAINER_PATHS)
    assert command[-2:] == ["--streams-config", "max.poll.records=50"]
    spec = pod_spec(tmp_path, image="kchaos-jvm-app:abc", command=command,
                    environment=app.env())
    assert spec["command"] == command
    assert spec["environment"] == {}
    assert engine_payload(spec)["command"] == command
    assert app.pod_image().runtime == "jvm"
    worker = PythonWorker().container_command(WORKER, "pod-0", CONTAINER_PATHS)
    assert worker == WORKER.argv("pod-0", CONTAINER_PATHS)  # the worker image's entrypoint


def test_pod_labels_find_it_and_record_its_node(tmp_path: Path) -> None:
    labels = pod_spec(tmp_path)["labels"]
    assert labels["kchaos.run"] == "r1" and labels["kchaos.pod"] == "pod-0"
    assert labels["kchaos.node"] == "node-1" and labels["kchaos.incarnation"] == "3"
    assert labels["kchaos.volume"] == "kchaos-r1-pod-0-g0"


def test_pod_mounts_its_volume_and_its_run_folder(tmp_path: Path) -> None:
    payload = engine_payload(pod_spec(tmp_path))
    assert payload["host_config"]["Binds"] == [
        f"kchaos-r1-pod-0-g0:{STATE_MOUNT}:rw",
        f"{tmp_path / 'pods' / 'pod-0'}:{POD_MOUNT}:rw",
    ]
    assert payload["host_config"]["NetworkMode"] == "kchaos-r1"
    assert payload["networking_config"] == {"kchaos-r1": None}


def test_a_relative_results_folder_is_mounted_by_its_absolute_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kchaos nightly` from a clone uses `results/`: the engine refuses a relative bind
    ("includes invalid characters for a local volume name")."""
    monkeypatch.chdir(tmp_path)
    relative = Path("results") / "run-1" / "pods" / "pod-0"
    binds = engine_payload(pod_spec(tmp_path, pod_dir=relative))["host_config"]["Binds"]
    assert binds[1] == f"{tmp_path / relative}:{POD_MOUNT}:rw"
    backed = pod_volume_spec("r1", "pod-0", "v", Path("results") / "volumes" / "v")
    assert backed["driver_opts"]["device"] == str(tmp_path / "results" / "volumes" / "v")


def test_pod_process_identity(tmp_path: Path) -> None:
    spec = pod_spec(tmp_path)
    payload = engine_payload(spec)
    # Distinct PIDs per incarnation (the trace contract), files owned by the user.
    assert payload["host_config"]["PidMode"] == "host"
    assert payload["user"] == "1000:1000"
    assert payload["stop_signal"] == "SIGTERM"  # stop = clean close; kill is SIGKILL
    assert payload["environment"] == {"PYTHONUNBUFFERED": "1"}
    assert "PortBindings" not in payload["host_config"]  # pods listen on nothing
    assert "user" not in pod_spec(tmp_path, user=None)


def test_each_start_is_a_new_container(tmp_path: Path) -> None:
    names = {pod_spec(tmp_path, incarnation=n)["name"] for n in (1, 2, 3)}
    assert len(names) == 3


def test_volume_specs(tmp_path: Path) -> None:
    plain = pod_volume_spec("r1", "pod-0", "kchaos-r1-pod-0-g1", None)
    assert plain["name"] == "kchaos-r1-pod-0-g1" and "driver_opts" not in plain
    assert plain["labels"] == {"kchaos.run": "r1", "kchaos.pod": "pod-0",
                               "kchaos.role": "pod-volume"}
    backed = pod_volume_spec("r1", "pod-0", "v", tmp_path / "volumes" / "v")
    assert backed["driver"] == "local"
    assert backed["driver_opts"] == {"type": "none", "o": "bind",
                                     "device": str(tmp_path / "volumes" / "v")}


def kafka_spec(node_id: int = 2, size: int = 3) -> dict[str, Any]:
    return kafka_container_spec("r1", node_id, size, "PEvJ2-5fSYKaf0_7Ie5cmw", "kchaos-r1",
                                host_port=40002)


def test_kafka_spec_has_every_broker_property() -> None:
    env = kafka_spec()["environment"]
    node = BrokerNode(2, 1, 1, Path("/x"))
    keys = [line.split("=", 1)[0] for line in broker_properties(node, "", 3).splitlines()]
    assert {property_env(key) for key in keys} | {"CLUSTER_ID", "KAFKA_HEAP_OPTS"} == set(env)
    assert env["KAFKA_NODE_ID"] == "2" and env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert env["KAFKA_DEFAULT_REPLICATION_FACTOR"] == "3"
    assert env["KAFKA_MIN_INSYNC_REPLICAS"] == "2"
    assert env["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    assert env["KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS"] == "0"
    assert env["KAFKA_LOG_DIRS"] == KAFKA_DATA_DIR


def test_kafka_spec_listeners_and_quorum() -> None:
    env = kafka_spec()["environment"]
    assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == ",".join(
        f"{n}@{kafka_container_name('r1', n)}:9093" for n in (1, 2, 3)
    )
    assert env["KAFKA_ADVERTISED_LISTENERS"] == (
        f"INTERNAL://{kafka_container_name('r1', 2)}:19092,EXTERNAL://127.0.0.1:40002"
    )
    assert env["KAFKA_INTER_BROKER_LISTENER_NAME"] == "INTERNAL"
    single = kafka_spec(1, 1)["environment"]
    assert single["KAFKA_CONTROLLER_QUORUM_VOTERS"] == f"1@{kafka_container_name('r1', 1)}:9093"
    assert single["KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"] == "1"


def test_kafka_spec_publishes_only_on_loopback() -> None:
    spec = kafka_spec()
    payload = engine_payload(spec)
    assert payload["host_config"]["PortBindings"] == {
        "9092/tcp": [{"HostIp": "127.0.0.1", "HostPort": "40002"}]
    }
    assert spec["labels"] == {"kchaos.run": "r1", "kchaos.role": "kafka", "kchaos.broker": "2"}
    assert spec["image"].startswith("kchaos-kafka:")


def test_property_env_follows_the_image_rule() -> None:
    # The apache/kafka image's documented examples.
    assert property_env("abc.def") == "KAFKA_ABC_DEF"
    assert property_env("abc-def") == "KAFKA_ABC___DEF"
    assert property_env("abc_def") == "KAFKA_ABC__DEF"


def test_names_are_dns_labels() -> None:
    long_run = "20250101-120000-KAFKA-20685-s1234567890-with-a-very-long-suffix"
    a, b = kafka_container_name(long_run, 1), kafka_container_name(long_run + "x", 1)
    assert len(a) <= 63 and a != b
    assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", a)
    assert safe_name("kchaos", "Run_1", "pod.0") == "kchaos-run-1-pod-0"


def test_worker_image_tag_follows_the_sources(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM python:3.11-slim\n")
    (tmp_path / "pyproject.toml").write_text("[project]\n")
    (tmp_path / "workloads").mkdir()
    source = tmp_path / "workloads" / "w.py"
    source.write_text("x = 1\n")
    first = worker_image_tag(tmp_path)
    assert first.startswith("kchaos-worker:")
    (tmp_path / "workloads" / "__pycache__").mkdir()
    (tmp_path / "workloads" / "__pycache__" / "w.cpython-311.pyc").write_bytes(b"\0")
    assert worker_image_tag(tmp_path) == first  # bytecode is not the image's input
    source.write_text("x = 2\n")
    assert worker_image_tag(tmp_path) != first


def _unused_tcp_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("kind", ["unix", "tcp"])
def test_require_engine_fails_at_once_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    address = (f"unix://{tmp_path / 'no-engine.sock'}" if kind == "unix"
               else f"tcp://127.0.0.1:{_unused_tcp_port()}")
    monkeypatch.setenv("DOCKER_HOST", address)
    for name in ("DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(UsageError) as caught:
        require_engine()
    message = str(caught.value)
    assert message == (
        f"no Docker engine answers at {address}: start Docker or use --platform local"
    )
    assert "\n" not in message


def test_a_pod_of_a_clock_plan_preloads_the_mounted_shim(tmp_path: Path) -> None:
    """The clock fault (faults/clock.py): the shim read-only in the container, preloaded,
    reading the clock file in the pod's folder, which is mounted already."""
    from harness.platforms.clock import CONTAINER_SHIM, with_clock_shim

    shim = tmp_path / "libkchaosclock.so"
    spec = with_clock_shim(pod_spec(tmp_path), shim)
    assert spec["environment"]["LD_PRELOAD"] == CONTAINER_SHIM
    assert spec["environment"]["KCHAOS_CLOCK_FILE"] == f"{POD_MOUNT}/clock"
    assert spec["environment"]["PYTHONUNBUFFERED"] == "1"  # the SUT's own kept
    assert spec["volumes"][str(shim)] == {"bind": CONTAINER_SHIM, "mode": "ro"}
    assert engine_payload(spec)  # the SDK takes it as containers.run would
