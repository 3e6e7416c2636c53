"""Platform `docker`: pods and brokers as containers on one Docker engine (docker SDK).

- A pod is one container per start (`kchaos-<run>-<pod>-<incarnation>`), labelled
  `kchaos.run`/`kchaos.pod`/`kchaos.node`, so `cleanup_run` finds whatever a crash left.
- A node is a label only: one engine is one host. A pod's volume is a named volume per
  (pod, generation): a move with the volume reuses it, a move without starts generation+1.
- `<run>/pods/<pod>/` is bind-mounted at /kchaos/pod: trace and control file stay host
  files, so faults/observe.py and the control hook work unchanged. A container's output
  is appended to `worker.log` when it ends (not live, unlike `local`).
- host_volumes=True (default): named volumes are `local` bind volumes whose data lives in
  `<run>/volumes/<volume>/`, so `volume()` is a run-folder path readable without root.
  host_volumes=False: plain engine volumes; `volume()` is the volume's `Mountpoint` from
  inspect (root-only on a Linux host, inside the VM on Docker Desktop).
Both need an engine that sees the harness's filesystem (a local Linux engine, or Docker
Desktop's file sharing) and publishes ports on 127.0.0.1. Why the specs look as they do:
docker_specs.py; the brokers' containers: docker_kafka.py.
"""

from __future__ import annotations

import contextlib
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, DockerException, NotFound

from faults.kinds import Need
from harness.errors import HarnessError
from harness.platforms import docker_engine as engine
from harness.platforms import docker_images as images
from harness.platforms import docker_specs as specs
from harness.platforms.base import LOG_FILE, PodInventory
from harness.platforms.clock import clock_shim, with_clock_shim
from harness.platforms.docker_engine import cleanup_run, require_engine
from harness.platforms.docker_images import ensure_kafka_image, ensure_worker_image
from harness.platforms.docker_kafka import DockerKafka
from harness.platforms.docker_network import DockerNetwork
from harness.platforms.docker_specs import (
    CONTAINER_PATHS,
    kafka_container_spec,
    pod_container_spec,
    pod_volume_spec,
)
from harness.platforms.placement import (
    NeedHooks,
    Placement,
    PlacementRequest,
    meet_needs,
    no_hook,
)
from harness.sut.base import PodImage, PodSettings, SystemUnderTest

# -- pods ---------------------------------------------------------------------------------

class DockerPlatform(PodInventory):
    """The Platform protocol (faults/platform.py) with pods as containers.

    `bootstrap` overrides the worker's bootstrap for containers (DockerKafka's
    internal_bootstrap: 127.0.0.1 inside a container is the container). `image` None means
    the worker image of the current sources, built on first use. Pod.exit_codes gets every
    container's exit code, the nemesis's kills (137) and stops included."""

    name = "docker"

    def __init__(self, run_dir: Path, worker: PodSettings, node_count: int, *,
                 run_id: str | None = None, client: docker.DockerClient | None = None,
                 image: str | None = None, network: str | None = None,
                 bootstrap: str | None = None, host_volumes: bool = True,
                 user: str | None = None, sut: SystemUnderTest | None = None) -> None:
        super().__init__(run_dir, node_count)
        self.run_id = run_id or run_dir.name
        self.worker = replace(worker, bootstrap=bootstrap) if bootstrap else worker
        self.client = client or engine.docker_client()
        self.sut = sut  # None: the Python worker in its image
        self.image = image or images.ensure_pod_image(
            images.build_client(), sut.pod_image() if sut is not None else PodImage("worker"))
        self.network = network or specs.default_network(self.run_id)
        self.host_volumes = host_volumes
        self.clock_shim: Path | None = None  # a plan with a clock fault: preloaded in pods
        self.user = user if user is not None else f"{os.getuid()}:{os.getgid()}"
        self._generation: dict[str, int] = {}
        self._containers: dict[str, Any] = {}
        engine.ensure_network(self.client, self.network, self.run_id)

    # -- inventory (nodes, pods and their folders: PodInventory) --------------------------

    def volume_name(self, name: str) -> str:
        self.pod(name)
        return specs.pod_volume_name(self.run_id, name, self._generation[name])

    def volume(self, name: str) -> Path:
        volume_name = self.volume_name(name)
        if self.host_volumes:
            return self.run_dir / "volumes" / volume_name
        return Path(self.client.volumes.get(volume_name).attrs["Mountpoint"])

    # -- lifecycle ------------------------------------------------------------------------

    def _new_volume(self, name: str) -> None:
        self._generation[name] = 0  # its first named volume (a move without it: the next)

    def start_pod(self, name: str) -> None:
        with self._lock:
            pod = self.pod(name)
            if pod.running:
                return
            volume_name = self._ensure_volume(name)
            sut = self.sut
            spec = pod_container_spec(
                self.run_id, name, pod.node, self.worker, self.image, self.network,
                volume_name, self.pod_dir(name), pod.incarnation + 1, self.user,
                sut.container_command(self.worker, name, CONTAINER_PATHS) if sut else None,
                sut.env() if sut else None,
            )
            if self.clock_shim is not None:
                spec = with_clock_shim(spec, self.clock_shim)
            container = self.client.containers.run(**spec)
            container.reload()
            pod.incarnation += 1
            pod.pid = int(container.attrs["State"].get("Pid") or 0) or None
            pod.running, pod.paused = True, False
            self._containers[name] = container

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        container, paused = self._take(name)
        if container is None:
            return
        if paused:  # SIGTERM must reach a running worker for it to close cleanly
            with contextlib.suppress(APIError):  # unless it is gone already
                container.unpause()
        container.stop(timeout=math.ceil(grace_s))
        self._finish(name, container, engine.wait_exit(container, grace_s + 30))

    def kill_pod(self, name: str) -> None:
        container, _ = self._take(name)
        if container is None:
            return
        try:
            # A paused container too: the engine sends SIGKILL, then thaws it to die.
            container.kill(signal="SIGKILL")
        except APIError:
            container.reload()
            if container.status == "paused":  # an engine that refuses to kill paused ones
                container.unpause()
                container.kill(signal="SIGKILL")
            # else it exited on its own meanwhile: wait() below gives its code
        self._finish(name, container, engine.wait_exit(container, 60))

    def pause_pod(self, name: str) -> None:
        pod = self.pod(name)
        if pod.running and not pod.paused:
            self._containers[name].pause()
            pod.paused = True

    def resume_pod(self, name: str) -> None:
        pod = self.pod(name)
        if pod.running and pod.paused:
            self._containers[name].unpause()
            pod.paused = False

    def move_pod(self, name: str, node: str, keep_volume: bool) -> None:
        self._check_node(node)
        pod = self.pod(name)
        if pod.running:
            self.stop_pod(name)
        if not keep_volume:
            # The old volume stays, unattached, like a persistent volume left on its node.
            self._generation[name] += 1
        pod.node = node
        self.start_pod(name)

    def poll(self) -> list[tuple[str, int]]:
        exited: list[tuple[str, int]] = []
        with self._lock:
            for name, container in list(self._containers.items()):
                try:
                    container.reload()
                except NotFound:  # removed behind our back: its code is lost
                    code = -1
                else:
                    if container.status not in ("exited", "dead"):
                        continue
                    code = int(container.attrs["State"].get("ExitCode", -1))
                pod = self._pods[name]
                pod.running, pod.paused, pod.pid = False, False, None
                del self._containers[name]
                self._finish(name, container, code)
                exited.append((name, code))
        return exited

    def teardown(self) -> None:
        """Stop every pod (logs into the run folder), drop run-folder-backed volume
        objects (their data stays in `<run>/volumes/`), and the network if idle."""
        failures = []
        for pod in self.pods():
            try:
                self.stop_pod(pod.name, grace_s=10.0)
            except DockerException as exc:
                failures.append(f"{pod.name}: {str(exc).splitlines()[0]}")
        if self.host_volumes:
            ours = {"label": f"{specs.LABEL_RUN}={self.run_id}"}
            for volume in self.client.volumes.list(filters=ours):
                volume.remove(force=True)
        engine.remove_network_if_idle(self.client, self.network)
        if failures:
            raise HarnessError(f"could not stop pods: {'; '.join(failures)}")

    def pod_container(self, name: str) -> Any | None:
        """The container of the pod's current incarnation; None while it is not running."""
        with self._lock:
            self.pod(name)
            return self._containers.get(name)

    # -- internals ------------------------------------------------------------------------

    def _ensure_volume(self, name: str) -> str:
        volume_name = self.volume_name(name)
        host_dir = self.volume(name) if self.host_volumes else None
        if host_dir is not None:
            host_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.client.volumes.get(volume_name)
        except NotFound:
            spec = pod_volume_spec(self.run_id, name, volume_name, host_dir)
            self.client.volumes.create(**spec)
        return volume_name

    def _take(self, name: str) -> tuple[Any | None, bool]:
        """Mark the pod stopped and hand back its container (poll no longer reports it)."""
        with self._lock:
            pod = self.pod(name)
            container = self._containers.pop(name, None) if pod.running else None
            paused = pod.paused
            pod.running, pod.paused, pod.pid = False, False, None
            return container, paused

    def _finish(self, name: str, container: Any, code: int) -> None:
        """Record the exit, append the container's output to worker.log, remove it."""
        pod = self._pods.get(name)
        if pod is not None:
            pod.exit_codes.append(code)
        try:
            output = container.logs(stdout=True, stderr=True)
            # v: its anonymous volumes too (a Java pod's image inherits the broker image's
            # data VOLUME); the pod's named state volume stays.
            container.remove(force=True, v=True)
        except NotFound:
            output = b""
        trailer = f"[kchaos] container {container.name} exited with code {code}\n".encode()
        with open(self.pod_dir(name) / LOG_FILE, "ab") as log:
            log.write(output + trailer)


def _fake_clocks(request: PlacementRequest, platform: DockerPlatform) -> None:
    platform.clock_shim = clock_shim()


# What meets each need of the plan here (a new capability: one entry).
NEED_HOOKS: NeedHooks[DockerPlatform] = {
    Need.NETWORK: no_hook,  # every run has its network (docker_network.py cuts it)
    Need.STORAGE: no_hook,  # refused before the run (harness/config/platforms.py)
    Need.CLOCK: _fake_clocks,
    Need.WORKER_HOOK: no_hook,  # the system under test's (its control file)
    Need.LEDGER: no_hook,  # the workload's (its accounts topic)
}


def open_docker(request: PlacementRequest) -> Placement:
    """Brokers and pods as containers on a network of the run (docker_network.py cuts it),
    with what the plan needs (NEED_HOOKS)."""
    run_dir = request.run_dir
    kafka = DockerKafka(run_dir, run_dir.name, request.brokers, version=request.kafka_version)
    try:
        kafka.start()
        platform = DockerPlatform(
            run_dir, replace(request.settings, bootstrap=kafka.internal_bootstrap),
            request.nodes, run_id=run_dir.name, bootstrap=kafka.internal_bootstrap,
            network=kafka.network, sut=request.sut,
        )
        meet_needs(NEED_HOOKS, request, platform)
    except BaseException:
        # No Placement yet, so no teardown: brokers that never got ready go here.
        with contextlib.suppress(Exception):
            kafka.stop()
        with contextlib.suppress(Exception):
            cleanup_run(kafka.client, run_dir.name, volumes=False)
        raise

    def teardown() -> None:
        try:
            platform.teardown()
            kafka.stop()
        finally:
            # Containers only: volumes may hold state someone wants to look at.
            cleanup_run(kafka.client, run_dir.name, volumes=False)

    return Placement(platform, kafka, kafka.bootstrap, teardown,
                     DockerNetwork(kafka.client, kafka.network, platform, kafka))


__all__ = [  # one entry point: the engine helpers and spec builders are re-exported
    "DockerKafka", "DockerPlatform", "cleanup_run", "ensure_kafka_image", "ensure_worker_image",
    "kafka_container_spec", "open_docker", "pod_container_spec", "pod_volume_spec",
    "require_engine",
]
