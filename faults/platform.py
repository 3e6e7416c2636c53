"""The interface the nemesis speaks to pods: where they run is the platform's business.

A pod is one worker process with a stable identity (its instance id) and a volume (its
state.dir); a node is a place a pod's volume can live on. `harness.platforms` implements
it with local processes (`local`) and containers (`docker`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass
class Pod:
    name: str
    node: str
    running: bool = False
    paused: bool = False
    pid: int | None = None
    incarnation: int = 0  # starts so far: a restarted pod is the same pod, a new process
    exit_codes: list[int] = field(default_factory=list)


class Platform(Protocol):
    """What the nemesis and the run lifecycle need from a place that runs pods."""

    name: str

    def nodes(self) -> list[str]: ...

    def pods(self) -> list[Pod]: ...

    def pod(self, name: str) -> Pod: ...

    def add_pod(self, name: str, node: str) -> Pod:
        """Create a pod (with an empty volume on `node`) and start it."""
        ...

    def start_pod(self, name: str) -> None: ...

    def stop_pod(self, name: str, grace_s: float = 30.0) -> None:
        """Graceful: SIGTERM, the worker closes cleanly (and writes its checkpoints)."""
        ...

    def kill_pod(self, name: str) -> None:
        """SIGKILL: no close, no checkpoint, memtables lost."""
        ...

    def pause_pod(self, name: str) -> None: ...

    def resume_pod(self, name: str) -> None: ...

    def move_pod(self, name: str, node: str, keep_volume: bool) -> None:
        """The pod, stopped, comes back on `node` with its volume or an empty one."""
        ...

    def remove_pod(self, name: str) -> None:
        """Stop the pod for good (scale in); its volume stays where it was."""
        ...

    def volume(self, name: str) -> Path:
        """Host path of the pod's state.dir (where `.checkpoint` files can be inspected)."""
        ...

    def trace_path(self, name: str) -> Path: ...

    def control_path(self, name: str) -> Path:
        """The fault-injection hook file the worker reads (checkpoint delay)."""
        ...

    def poll(self) -> list[tuple[str, int]]:
        """Pods whose process exited since the last poll, with exit codes."""
        ...

    def teardown(self) -> None:
        """Stop every pod and remove what the platform made for them (not the brokers)."""
        ...
