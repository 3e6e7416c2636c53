"""Platform `local`: pods are processes of the system under test on this machine; a node is
a folder `<run>/nodes/<node>/` holding the volumes (state dirs) of the pods placed on it.
With a run network (a plan with network faults), each pod runs in its own namespace."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from common.waiting import wait_until
from faults.kinds import Need
from harness.errors import HarnessError
from harness.kafka.cluster import KafkaCluster, NodeNetwork
from harness.platforms.base import LOG_FILE, PodInventory
from harness.platforms.clock import clock_env, clock_shim
from harness.platforms.faultfs import FaultFsMounts
from harness.platforms.placement import (
    NeedHooks,
    Placement,
    PlacementRequest,
    meet_needs,
    no_hook,
)
from harness.procs import ProcessRegistry
from harness.sut.base import PodPaths, PodSettings, SystemUnderTest

if TYPE_CHECKING:
    from harness.platforms.local_network import RunNetwork


class LocalPlatform(PodInventory):
    name = "local"

    def __init__(
        self, run_dir: Path, registry: ProcessRegistry, sut: SystemUnderTest,
        settings: PodSettings, node_count: int, network: NodeNetwork | None = None,
        faultfs: FaultFsMounts | None = None, clock_shim: Path | None = None,
    ) -> None:
        super().__init__(run_dir, node_count)
        self.registry = registry
        # With storage faults in the plan, each pod's state.dir is its fault filesystem.
        self.faultfs = faultfs
        self.sut = sut
        self.settings = settings
        self.network = network
        self.clock_shim = clock_shim  # a plan with a clock fault: preloaded into every pod
        self._popens: dict[str, subprocess.Popen[bytes]] = {}
        for node in self._nodes:
            (run_dir / "nodes" / node).mkdir(parents=True, exist_ok=True)

    # -- inventory (nodes, pods and their folders: PodInventory) ------------------------

    def volume(self, name: str) -> Path:
        pod = self.pod(name)
        return self.run_dir / "nodes" / pod.node / name / "state"

    # -- lifecycle ----------------------------------------------------------------------

    def _new_volume(self, name: str) -> None:
        self.volume(name).mkdir(parents=True, exist_ok=True)

    def start_pod(self, name: str) -> None:
        with self._lock:
            pod = self.pod(name)
            if pod.running:
                return
            paths = PodPaths(str(self._state_dir(name)), str(self.trace_path(name)),
                             str(self.control_path(name)))
            argv = self.sut.command(self.settings, name, paths)
            if self.network is not None:
                argv = self.network.wrap(name, argv)
            env = {**os.environ, **self.sut.env()}
            if self.clock_shim is not None:
                env.update(clock_env(str(self.clock_shim), str(self.pod_dir(name))))
            popen = self.registry.spawn(
                f"pod-{name}", argv, self.pod_dir(name) / LOG_FILE, env=env
            )
            pod.pid, pod.running, pod.paused = popen.pid, True, False
            pod.incarnation += 1
            self._popens[name] = popen

    def _state_dir(self, name: str) -> Path:
        if self.faultfs is None:
            return self.volume(name)
        return self.faultfs.mount(name, self.volume(name), self.pod_dir(name) / "faultfs.log")

    # -- the storage faults (faults.context.Storage): the pod is down when they act -------

    def power_loss(self, name: str) -> dict[str, object]:
        if self.faultfs is None:
            raise HarnessError("power-loss needs the fault filesystem (a storage fault plan)")
        return self.faultfs.power_loss(name, self.volume(name),
                                       self.pod_dir(name) / "faultfs.log")

    def set_io_rules(self, name: str, rules: list[dict[str, object]]) -> None:
        if self.faultfs is None:
            raise HarnessError("I/O faults need the fault filesystem (a storage fault plan)")
        self.faultfs.mount(name, self.volume(name), self.pod_dir(name) / "faultfs.log")
        self.faultfs.set_rules(name, rules)

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        pid = self._take_pid(name)
        if pid is not None:
            self.registry.stop(pid, grace_s)

    def kill_pod(self, name: str) -> None:
        pid = self._take_pid(name)
        if pid is not None:
            self.registry.kill(pid)

    def pause_pod(self, name: str) -> None:
        pod = self.pod(name)
        if pod.running and pod.pid is not None and not pod.paused:
            os.kill(pod.pid, signal.SIGSTOP)
            pod.paused = True
            _wait_status(pod.pid, psutil.STATUS_STOPPED)  # signals land asynchronously

    def resume_pod(self, name: str) -> None:
        pod = self.pod(name)
        if pod.running and pod.pid is not None and pod.paused:
            os.kill(pod.pid, signal.SIGCONT)
            pod.paused = False
            _wait_status(pod.pid, psutil.STATUS_STOPPED, until_not=True)

    def move_pod(self, name: str, node: str, keep_volume: bool) -> None:
        self._check_node(node)
        pod = self.pod(name)
        if pod.running:
            self.stop_pod(name)
        if self.faultfs is not None:
            self.faultfs.unmount(name)  # a volume moves unmounted (a clean shutdown)
        old_volume_home = self.run_dir / "nodes" / pod.node / name
        new_volume_home = self.run_dir / "nodes" / node / name
        if keep_volume:
            if new_volume_home != old_volume_home:
                shutil.move(old_volume_home, new_volume_home)
        else:
            # The old volume stays behind on its node, like a detached persistent volume.
            n = 0
            while (left := old_volume_home.with_name(f"{name}.left-{n}")).exists():
                n += 1
            if old_volume_home.exists():
                old_volume_home.rename(left)
        pod.node = node
        self.volume(name).mkdir(parents=True, exist_ok=True)
        self.start_pod(name)

    def poll(self) -> list[tuple[str, int]]:
        exited: list[tuple[str, int]] = []
        with self._lock:
            for name, popen in list(self._popens.items()):
                code = popen.poll()
                if code is not None:
                    pod = self._pods.get(name)
                    if pod is not None and pod.running:
                        pod.running, pod.paused, pod.pid = False, False, None
                        pod.exit_codes.append(int(code))
                        exited.append((name, int(code)))
                    self.registry.forget(popen.pid)
                    del self._popens[name]
        return exited

    def teardown(self) -> None:
        try:
            # All at once: each pod's graceful exit (leave the group, close its clients) is
            # mostly waiting, and every run pays it between its drain and its collection.
            running = [pod.name for pod in self.pods() if pod.running]
            with ThreadPoolExecutor(max(1, len(running)), thread_name_prefix="stop-pod") as pool:
                list(pool.map(lambda name: self.stop_pod(name, grace_s=10.0), running))
        finally:
            if self.faultfs is not None:
                self.faultfs.teardown()

    def _take_pid(self, name: str) -> int | None:
        """Mark the pod stopped and hand back its PID (stop_process resumes a paused one)."""
        with self._lock:
            pod = self.pod(name)
            pid = pod.pid if pod.running else None
            pod.running, pod.paused, pod.pid = False, False, None
            self._popens.pop(name, None)
            return pid


def _wait_status(pid: int, status: str, until_not: bool = False, timeout_s: float = 5.0) -> None:
    """Until the process is (or is no longer) in `status`, for at most `timeout_s`."""

    def reached() -> bool:
        try:
            return (psutil.Process(pid).status() == status) != until_not
        except psutil.Error:  # gone: nothing left to wait for
            return True

    wait_until(reached, timeout_s, interval_s=0.01)


@dataclass
class LocalCapabilities:
    """What the plan's needs add to a local placement (NEED_HOOKS)."""

    network: RunNetwork | None = None  # the run's own network: pods in namespaces
    faultfs: FaultFsMounts | None = None  # each pod's state.dir its fault filesystem
    clock_shim: Path | None = None  # preloaded into every pod


def _own_network(request: PlacementRequest, made: LocalCapabilities) -> None:
    from harness.platforms.local_network import RunNetwork

    if request.bootstrap is None:  # a given Kafka stays where it is: no network is made
        made.network = RunNetwork(request.run_dir, request.registry)


def _fault_filesystem(request: PlacementRequest, made: LocalCapabilities) -> None:
    made.faultfs = FaultFsMounts(request.registry)


def _fake_clocks(request: PlacementRequest, made: LocalCapabilities) -> None:
    made.clock_shim = clock_shim()


# What meets each need of the plan here (a new capability: one entry).
NEED_HOOKS: NeedHooks[LocalCapabilities] = {
    Need.NETWORK: _own_network,
    Need.STORAGE: _fault_filesystem,
    Need.CLOCK: _fake_clocks,
    Need.WORKER_HOOK: no_hook,  # the system under test's (its control file)
    Need.LEDGER: no_hook,  # the workload's (its accounts topic)
}


def open_local(request: PlacementRequest) -> Placement:
    """Brokers (unless the run attaches to a given bootstrap) and pods as processes here,
    with what the plan needs (NEED_HOOKS): network faults get a network of their own first
    (local_network.py), without, 127.0.0.1 as ever."""
    run_dir, registry, bootstrap = request.run_dir, request.registry, request.bootstrap
    made = meet_needs(NEED_HOOKS, request, LocalCapabilities())
    network = made.network
    cluster = None
    try:
        if network is not None:
            network.create()
        if bootstrap is None:
            cluster = KafkaCluster(run_dir, registry, size=request.brokers, network=network,
                                   version=request.kafka_version)
            cluster.start()
            bootstrap = cluster.bootstrap
    except BaseException:
        # No Placement yet, so no teardown: what started so far goes here.
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.stop()
        if network is not None:
            registry.stop_all()
            network.close()
        raise
    platform = LocalPlatform(
        run_dir, registry, request.sut, replace(request.settings, bootstrap=bootstrap),
        request.nodes, network, made.faultfs, made.clock_shim,
    )

    def teardown() -> None:
        try:
            platform.teardown()  # the pods first: they talk to the brokers
        finally:
            try:
                if cluster is not None:
                    cluster.stop()  # all brokers at once: a lone survivor waits its grace
            finally:
                if network is not None:
                    network.close()  # kills what is left inside its namespaces first

    return Placement(platform, cluster, bootstrap, teardown, network, network,
                     storage=platform if made.faultfs is not None else None)
