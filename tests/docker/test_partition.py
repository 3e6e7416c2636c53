"""The `partition` fault: its kind, its plans, and a local run whose network cannot be made
refused before it starts (no engine needed; on a real engine: test_engine.py, tests/e2e;
the local run network: tests/platform/test_local_network.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from faults.context import FaultContext
from faults.kinds import FAULT_KINDS
from faults.model import Step, Trigger
from faults.plan import plan
from harness.errors import UsageError
from harness.platforms import require_platform
from harness.platforms.docker_network import DockerNetwork


class RecordingNetwork:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def disconnect(self, target: str) -> None:
        self.calls.append(("disconnect", target))

    def reconnect(self, target: str) -> None:
        self.calls.append(("reconnect", target))


def step(target: str) -> Step:
    return Step(0, "partition", target, Trigger(6.0), heal_after_s=5.0)


def test_partition_cuts_and_heals_through_the_network() -> None:
    network = RecordingNetwork()
    ctx = FaultContext(platform=None, application_id="app", network=network)  # type: ignore[arg-type]
    kind = FAULT_KINDS["partition"]
    kind.apply(ctx, step("pod-1"))
    kind.heal(ctx, step("pod-1"))
    kind.apply(ctx, step("broker-2"))
    assert network.calls == [("disconnect", "pod-1"), ("reconnect", "pod-1"),
                             ("disconnect", "broker-2")]
    assert not kind.instant  # it stays in force until healed


def test_partition_without_a_network_fails_its_step() -> None:
    ctx = FaultContext(platform=None, application_id="app")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="a platform with a run network"):
        FAULT_KINDS["partition"].apply(ctx, step("pod-0"))


class EngineNetwork:
    """The engine's run network as DockerNetwork uses it, strict as the engine: it refuses
    to disconnect a container that is not connected ("... is not connected to the
    network")."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.disconnects = 0

    def get(self, name: str) -> EngineNetwork:
        assert name == self.name
        return self

    def disconnect(self, container: Container, force: bool = False) -> None:
        if self.name not in container.networks:
            raise RuntimeError(f"container is not connected to the network {self.name}")
        del container.networks[self.name]
        self.disconnects += 1

    def connect(self, container: Container) -> None:
        container.networks[self.name] = {}


class Container:
    def __init__(self, network: str) -> None:
        self.networks: dict[str, object] = {network: {}}
        self.attrs = {"NetworkSettings": {"Networks": self.networks}}

    def reload(self) -> None:
        pass


def test_docker_cut_of_a_pod_cut_off_already_leaves_it_cut() -> None:
    """Overlapping cuts each ask for the pod cut off (faults.kinds `_partition`): the
    second finds it disconnected and is not an error."""
    engine, container = EngineNetwork("run-net"), Container("run-net")

    class Pods:
        def pod_container(self, name: str) -> Container:
            return container

    network = DockerNetwork(type("Client", (), {"networks": engine})(),  # type: ignore[arg-type]
                            "run-net", Pods())
    network.disconnect("pod-0")
    network.disconnect("pod-0")
    assert engine.disconnects == 1 and "run-net" not in container.networks
    network.reconnect("pod-0")
    assert "run-net" in container.networks


@pytest.mark.parametrize("seed", range(20))
def test_partition_profile_cuts_pods_and_brokers_only_out_of_three(seed: int) -> None:
    one = plan(seed, "partition", 2, 1, 60)
    assert one.steps and {s.fault for s in one.steps} == {"partition"}
    assert all(s.target.startswith("pod-") and s.heal_after_s for s in one.steps)
    three = plan(seed, "partition", 2, 3, 60)
    assert all(s.target in {"pod-0", "pod-1", "broker-1", "broker-2", "broker-3"}
               for s in three.steps)


def test_platforms_refuse_what_they_cannot_apply() -> None:
    with pytest.raises(UsageError, match="--platform docker cannot apply netem"):
        require_platform("docker", faults=["kill", "netem"])
    require_platform("local", faults=["kill", "pause", "move"])  # no error


def test_local_run_whose_network_cannot_be_made_exits_254_before_a_run_folder(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness", "--results-dir", str(tmp_path / "results"), "run",
         "--profile", "partition", "--time-limit", "20"],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "200", "KCHAOS_NETNS_POOL": "8.8.0.0/16"},
    )
    assert done.returncode == 254
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "KCHAOS_NETNS_POOL=8.8.0.0/16" in lines[0], lines
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
