"""What every platform shares: the bookkeeping of nodes, pods and each pod's folder under
the run. What a pod runs is the system under test's (harness/sut).

The platform interface itself (`Platform`, `Pod`) is `faults.platform`: it is what the
nemesis speaks, and harness depends on faults, not the other way round.
"""

from __future__ import annotations

import threading
from pathlib import Path

from faults.platform import Platform, Pod
from harness.errors import HarnessError

__all__ = ["Platform", "Pod", "PodInventory"]

# The files of `<run>/pods/<pod>/`: the worker's trace, the nemesis' control file, the log.
TRACE_FILE, CONTROL_FILE, LOG_FILE = "trace.jsonl", "control.json", "worker.log"

class PodInventory:
    """The inventory half of a platform, alike for all: nodes `node-0..`, pods by name,
    and the folder `<run>/pods/<pod>/` holding each pod's trace, control file and log."""

    def __init__(self, run_dir: Path, node_count: int) -> None:
        self.run_dir = run_dir
        self._nodes = [f"node-{n}" for n in range(node_count)]
        self._pods: dict[str, Pod] = {}
        self._lock = threading.RLock()

    def nodes(self) -> list[str]:
        return list(self._nodes)

    def pods(self) -> list[Pod]:
        with self._lock:
            return list(self._pods.values())

    def pod(self, name: str) -> Pod:
        try:
            return self._pods[name]
        except KeyError:
            # an internal invariant (plans name pods the run created): a harness failure, 255
            raise HarnessError(f"no pod named {name!r}") from None

    def pod_dir(self, name: str) -> Path:
        return self.run_dir / "pods" / name

    def trace_path(self, name: str) -> Path:
        return self.pod_dir(name) / TRACE_FILE

    def control_path(self, name: str) -> Path:
        return self.pod_dir(name) / CONTROL_FILE

    def add_pod(self, name: str, node: str) -> Pod:
        """Create a pod with an empty volume on `node` and start it."""
        pod = self._new_pod(name, node)
        self._new_volume(name)
        self.start_pod(name)
        return pod

    def _new_volume(self, name: str) -> None:
        raise NotImplementedError  # each platform makes its own (a folder, a named volume)

    def start_pod(self, name: str) -> None:
        raise NotImplementedError  # each platform starts its own processes or containers

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        raise NotImplementedError  # each platform stops its own processes or containers

    def remove_pod(self, name: str) -> None:
        self.stop_pod(name)
        with self._lock:
            del self._pods[name]

    def _new_pod(self, name: str, node: str) -> Pod:
        """Registers a pod placed on `node`; its folder is created."""
        self._check_node(node)
        with self._lock:
            if name in self._pods:
                raise HarnessError(f"pod {name!r} exists already")
            pod = self._pods[name] = Pod(name=name, node=node)
        self.pod_dir(name).mkdir(parents=True, exist_ok=True)
        return pod

    def _check_node(self, node: str) -> None:
        if node not in self._nodes:
            raise HarnessError(f"no node named {node!r}")
