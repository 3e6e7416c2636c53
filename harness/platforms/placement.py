"""What a platform gives a run (`Placement`) and what the run asks of it (`PlacementRequest`):
every platform's `open_*` function (named in harness/run/platforms.py) takes the one and
returns the other."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from faults.context import Brokers, FaultContext, GlobalTopic, Group, Links, Network, Storage
from faults.platform import Platform
from harness.procs import ProcessRegistry
from harness.sut.base import PodSettings, SystemUnderTest


@dataclass(frozen=True)
class PlacementRequest:
    run_dir: Path
    registry: ProcessRegistry
    sut: SystemUnderTest
    settings: PodSettings
    nodes: int
    brokers: int
    bootstrap: str | None  # a Kafka to use as it is; None: the platform starts the brokers
    own_network: bool  # the plan has network faults
    storage_faults: bool  # the plan has one: the pods' volumes go on the fault filesystem
    kafka_version: str  # the brokers' release
    fake_clocks: bool = False  # the plan has a clock fault: the pods run on the clock shim


@dataclass
class Placement:
    platform: Platform
    brokers: Brokers | None
    bootstrap: str
    teardown: Callable[[], None]  # stops everything it started
    network: Network | None = None
    links: Links | None = None
    storage: Storage | None = None

    def fault_context(self, pods: Platform, application_id: str,
                      global_topic: GlobalTopic | None, group: Group | None) -> FaultContext:
        """What the nemesis acts through: this placement's capabilities (those it lacks are
        None: a plan that needs one was refused before the run), its pods as the run
        drives them (`pods`: the platform under the run's restart policy), the workload's
        topic and the run's group."""
        return FaultContext(platform=pods, application_id=application_id,
                            brokers=self.brokers, network=self.network, links=self.links,
                            storage=self.storage, global_topic=global_topic, group=group)
