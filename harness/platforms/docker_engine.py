"""The Docker engine as the docker platform needs it: is there one, the run's network, and
cleanup of everything labelled with a run. Images: docker_images.py."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any

import docker
from docker.errors import APIError, DockerException, NotFound

from harness.errors import UsageError
from harness.platforms import docker_specs as specs

PING_TIMEOUT_S = 5


def engine_address() -> str:
    """Where the SDK looks (docker.from_env reads DOCKER_HOST, not the CLI's contexts)."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def require_engine() -> None:
    """Raise UsageError (exit 254) at once when no engine answers."""
    try:
        client = docker.from_env(timeout=PING_TIMEOUT_S)  # this already asks for the version
        try:
            client.ping()
        finally:
            client.close()
    except (DockerException, OSError) as exc:  # requests' errors are OSErrors
        if "Permission denied" in str(exc) or isinstance(exc, PermissionError):
            raise UsageError(
                f"no permission to use the Docker engine at {engine_address()}: add your "
                "user to the `docker` group (then log in again) or use --platform local"
            ) from None
        raise UsageError(
            f"no Docker engine answers at {engine_address()}: start Docker or use --platform local"
        ) from None


def docker_client() -> docker.DockerClient:
    require_engine()
    return docker.from_env()


def ensure_network(client: docker.DockerClient, name: str, run_id: str) -> None:
    # get(), not list(names=...): the engine's name filter matches parts of names too.
    try:
        client.networks.get(name)
    except NotFound:
        client.networks.create(name, driver="bridge", labels={specs.LABEL_RUN: run_id})


def remove_network_if_idle(client: docker.DockerClient, name: str) -> None:
    # Brokers and pods share it: whichever of the two goes last removes it.
    with contextlib.suppress(NotFound, APIError):
        client.networks.get(name).remove()


def cleanup_run(client: docker.DockerClient, run_id: str, volumes: bool = True) -> list[str]:
    """Remove every container, (optionally) volume and network labelled with the run:
    what a crashed harness left behind. Returns their names."""
    found: dict[str, str | list[str] | bool] = {"label": f"{specs.LABEL_RUN}={run_id}"}
    removed = []
    for container in client.containers.list(all=True, filters=found):
        container.remove(force=True, v=True)
        removed.append(str(container.name))
    if volumes:
        for volume in client.volumes.list(filters=found):
            volume.remove(force=True)
            removed.append(str(volume.name))
    for network in client.networks.list(filters=found):
        with contextlib.suppress(APIError):  # still in use by something that is not ours
            network.remove()
            removed.append(str(network.name))
    return removed


def clean_runs(run_ids: Iterable[str]) -> list[str]:
    """`kchaos clean`: the containers, volumes and networks these runs left (each labelled
    with its run, docker_specs.LABEL_RUN); none where no engine answers (then nothing of
    theirs is running either)."""
    try:
        client = docker.from_env(timeout=PING_TIMEOUT_S)
    except (DockerException, OSError):
        return []
    try:
        client.ping()
        return [name for run_id in sorted(run_ids) for name in cleanup_run(client, run_id)]
    except (DockerException, OSError):
        return []
    finally:
        client.close()


def wait_exit(container: Any, timeout_s: float) -> int:
    """The container's exit code (137 after SIGKILL)."""
    return int(container.wait(timeout=timeout_s).get("StatusCode", -1))
