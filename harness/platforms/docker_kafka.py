"""Brokers as containers (platform `docker`, docker.py): one per node of a static KRaft
quorum of 1 or 3 on the run's network, each with its host port for the harness, ready when
an admin call lists them all."""

from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError
from kafka.errors import KafkaError

from harness.errors import HarnessError, UsageError
from harness.kafka.cluster import READY_TIMEOUT_S, describe_brokers, free_port, new_cluster_id
from harness.kafka.jars import kafka_version
from harness.platforms import docker_engine as engine
from harness.platforms import docker_images as images
from harness.platforms import docker_specs as specs
from harness.platforms.docker_specs import kafka_container_spec

# A container adds its creation (and, on a busy shared machine, much more) to the JVM's start.
CONTAINER_READY_TIMEOUT_S = 2 * READY_TIMEOUT_S

class DockerKafka:
    """KafkaCluster's interface with brokers as containers (dockerfiles/kafka.Dockerfile's
    image), static quorum of 1 or 3, readiness by an admin call."""

    def __init__(self, run_dir: Path, run_id: str, size: int = 1, *,
                 client: docker.DockerClient | None = None, network: str | None = None,
                 image: str | None = None, heap: str = "384m",
                 version: str | None = None) -> None:
        if size not in (1, 3):
            raise UsageError(f"--brokers {size}: kchaos runs clusters of 1 or 3 nodes")
        self.run_dir, self.run_id, self.size = run_dir, run_id, size
        self.client = client or engine.docker_client()
        self.network = network or specs.default_network(run_id)
        # The release's image (default: the pinned one), built here from its jars the
        # first time.
        self.version = version or kafka_version()
        self.image = image or images.ensure_kafka_image(images.build_client(),
                                                        version=self.version)
        self.heap, self.cluster_id = heap, new_cluster_id()
        self.host_ports = {n: free_port() for n in range(1, size + 1)}
        self._containers: dict[int, Any] = {}

    @property
    def bootstrap(self) -> str:
        """For the host (the harness, load client, checker)."""
        return ",".join(f"127.0.0.1:{port}" for port in self.host_ports.values())

    @property
    def internal_bootstrap(self) -> str:
        """For containers on the run's network (pods)."""
        names = [specs.kafka_container_name(self.run_id, n) for n in self.host_ports]
        return ",".join(f"{name}:{specs.KAFKA_INTERNAL_PORT}" for name in names)

    def spec(self, node_id: int) -> dict[str, Any]:
        return kafka_container_spec(self.run_id, node_id, self.size, self.cluster_id,
                                    self.network, self.host_ports[node_id], self.image, self.heap)

    def start(self, timeout_s: float = CONTAINER_READY_TIMEOUT_S) -> None:
        engine.ensure_network(self.client, self.network, self.run_id)
        for node_id in self.host_ports:
            self._containers[node_id] = self.client.containers.run(**self.spec(node_id))
        self.wait_ready(timeout_s)

    def stop(self) -> None:
        # In parallel, as KafkaCluster.stop: a lone survivor would wait for a lost quorum.
        with ThreadPoolExecutor(max(1, len(self._containers))) as pool:
            list(pool.map(self.stop_broker, list(self._containers)))
        for node_id, container in list(self._containers.items()):
            self._save_log(node_id, container)
            container.remove(force=True, v=True)
            del self._containers[node_id]
        engine.remove_network_if_idle(self.client, self.network)

    def stop_broker(self, node_id: int) -> None:
        """Graceful shutdown (SIGTERM, controlled shutdown)."""
        self._container(node_id).stop(timeout=30)

    def kill_broker(self, node_id: int) -> None:
        with contextlib.suppress(APIError):  # not running: already dead, as asked
            self._container(node_id).kill(signal="SIGKILL")

    def restart_broker(self, node_id: int, timeout_s: float = CONTAINER_READY_TIMEOUT_S) -> None:
        """The same container again: same data volume, same ports."""
        container = self._container(node_id)
        container.reload()
        if container.status != "running":
            container.start()
        self.wait_ready(timeout_s, expected=self.running_ids())

    def running_ids(self) -> set[int]:
        alive = set()
        for node_id, container in self._containers.items():
            container.reload()
            alive |= {node_id} if container.status == "running" else set()
        return alive

    def wait_ready(self, timeout_s: float, expected: set[int] | None = None) -> None:
        expected = expected if expected is not None else set(self.host_ports)
        deadline, last_error = time.monotonic() + timeout_s, "no answer"
        while time.monotonic() < deadline:
            for node_id in expected - self.running_ids():
                log = self._save_log(node_id, self._container(node_id))
                raise HarnessError(f"Kafka container {node_id} exited at start: see {log}")
            try:
                brokers = describe_brokers(self.bootstrap)
                if expected <= brokers:
                    return
                last_error = f"brokers registered: {sorted(brokers)}"
            except KafkaError as exc:
                last_error = type(exc).__name__
            time.sleep(0.5)
        raise HarnessError(f"Kafka containers not ready after {timeout_s:.0f}s ({last_error})")

    def broker_container(self, node_id: int) -> Any:
        """The broker's container (the same one across its restarts)."""
        return self._container(node_id)

    def _container(self, node_id: int) -> Any:
        if node_id not in self._containers:
            raise HarnessError(f"no broker {node_id}: this cluster has nodes 1..{self.size}")
        return self._containers[node_id]

    def _save_log(self, node_id: int, container: Any) -> Path:
        path = self.run_dir / "kafka" / f"broker-{node_id}.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(container.logs(stdout=True, stderr=True))  # all restarts, in order
        return path
