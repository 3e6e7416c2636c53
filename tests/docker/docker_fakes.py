"""A fake docker client: the part of the SDK the docker platform uses, in memory, with
the engine's behaviour where it matters (kill of a stopped container fails, SIGKILL exits
137, volumes and networks are found by name)."""

from __future__ import annotations

import itertools
from typing import Any

from docker.errors import APIError, NotFound

_pids = itertools.count(1000)


class FakeContainer:
    def __init__(self, client: FakeClient, spec: dict[str, Any]) -> None:
        self.client, self.spec, self.name = client, spec, spec["name"]
        self.labels: dict[str, str] = spec["labels"]
        self.status, self.removed = "running", False
        self.calls: list[tuple[Any, ...]] = []
        self.attrs: dict[str, Any] = {"State": {"Pid": next(_pids), "ExitCode": 0}}

    def reload(self) -> None:
        if self.removed:
            raise NotFound("no such container")

    def exit(self, code: int) -> None:
        self.status = "exited"
        self.attrs["State"].update(Pid=0, ExitCode=code)

    def kill(self, signal: str) -> None:
        self.calls.append(("kill", signal))
        if self.status not in ("running", "paused"):
            raise APIError("container is not running")
        self.exit(137 if signal == "SIGKILL" else 143)

    def stop(self, timeout: int) -> None:
        self.calls.append(("stop", timeout, self.status))
        self.exit(0)

    def start(self) -> None:
        self.calls.append(("start",))
        self.status = "running"
        self.attrs["State"].update(Pid=next(_pids), ExitCode=0)

    def pause(self) -> None:
        self.calls.append(("pause",))
        self.status = "paused"

    def unpause(self) -> None:
        self.calls.append(("unpause",))
        self.status = "running"

    def wait(self, timeout: float) -> dict[str, int]:
        return {"StatusCode": self.attrs["State"]["ExitCode"]}

    def logs(self, stdout: bool = True, stderr: bool = True) -> bytes:
        return f"output of {self.name}\n".encode()

    def remove(self, force: bool = False, v: bool = False) -> None:
        self.removed = True


class FakeVolume:
    def __init__(self, client: FakeClient, spec: dict[str, Any]) -> None:
        self.client, self.spec, self.name = client, spec, spec["name"]
        self.attrs = {"Mountpoint": f"/var/lib/docker/volumes/{self.name}/_data"}

    def remove(self, force: bool = False) -> None:
        del self.client.volumes.items[self.name]


class FakeVolumes:
    def __init__(self, client: FakeClient) -> None:
        self.client, self.items = client, {}

    def get(self, name: str) -> FakeVolume:
        if name not in self.items:
            raise NotFound(name)
        return self.items[name]

    def create(self, **spec: Any) -> FakeVolume:
        self.items[spec["name"]] = FakeVolume(self.client, spec)
        return self.items[spec["name"]]

    def list(self, filters: dict[str, str]) -> list[FakeVolume]:
        key, value = filters["label"].split("=")
        return [v for v in self.items.values() if v.spec["labels"].get(key) == value]


class FakeContainers:
    def __init__(self, client: FakeClient) -> None:
        self.client, self.started = client, []
        self.exit_at_start: set[str] = set()  # names of containers that die at once

    def run(self, **spec: Any) -> FakeContainer:
        container = FakeContainer(self.client, spec)
        self.started.append(container)
        if container.name in self.exit_at_start:
            container.exit(1)
        return container


class FakeNetwork:
    def __init__(self, networks: FakeNetworks, name: str) -> None:
        self.networks, self.name = networks, name

    def remove(self) -> None:
        del self.networks.items[self.name]


class FakeNetworks:
    def __init__(self) -> None:
        self.items: dict[str, FakeNetwork] = {}

    def get(self, name: str) -> FakeNetwork:
        if name not in self.items:
            raise NotFound(name)
        return self.items[name]

    def create(self, name: str, **_: Any) -> FakeNetwork:
        self.items[name] = FakeNetwork(self, name)
        return self.items[name]


class FakeClient:
    def __init__(self) -> None:
        self.containers = FakeContainers(self)
        self.volumes = FakeVolumes(self)
        self.networks = FakeNetworks()
