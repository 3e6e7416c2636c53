"""The `partition` fault on the docker platform: a pod's or a broker's container is
disconnected from the run's network (it then has no network but loopback: it reaches
nobody and nobody reaches it, the harness's connections through the published port
included), and healed by connecting it again under the same name."""

from __future__ import annotations

import contextlib
from typing import Any, Protocol

import docker
from docker.errors import NotFound

from harness.errors import UsageError


class PodContainers(Protocol):
    """Where a pod's container is found (harness/platforms/docker.py's DockerPlatform)."""

    def pod_container(self, name: str) -> Any | None: ...


class BrokerContainers(Protocol):
    """Where a broker's container is found (docker.py's DockerKafka)."""

    def broker_container(self, node_id: int) -> Any: ...


class DockerNetwork:
    """faults.context.Network over the run's network; targets `pod-N` or `broker-N`."""

    def __init__(self, client: docker.DockerClient, name: str,
                 platform: PodContainers | None = None, kafka: BrokerContainers | None = None
                 ) -> None:
        self.client, self.name = client, name
        self.platform, self.kafka = platform, kafka

    def disconnect(self, target: str) -> None:
        container = self._container(target)
        if container is None:  # a pod not running: nothing to cut off
            return
        container.reload()
        if self.name not in container.attrs["NetworkSettings"]["Networks"]:
            return  # cut off already (an overlapping cut): the engine refuses a second
        self.client.networks.get(self.name).disconnect(container, force=True)

    def reconnect(self, target: str) -> None:
        container = self._container(target)
        if container is None:  # it was stopped meanwhile: its next start joins anyway
            return
        container.reload()
        if self.name in container.attrs["NetworkSettings"]["Networks"]:
            return  # a fresh incarnation, started since the cut, joined at start
        with contextlib.suppress(NotFound):  # gone meanwhile: nothing to heal
            self.client.networks.get(self.name).connect(container)

    def _container(self, target: str) -> Any | None:
        if target.startswith("broker-") and self.kafka is not None:
            return self.kafka.broker_container(int(target.removeprefix("broker-")))
        if self.platform is not None and not target.startswith("broker-"):
            return self.platform.pod_container(target)  # UsageError if no such pod
        raise UsageError(f"partition: no pod or broker named {target!r}")


__all__ = ["DockerNetwork"]
