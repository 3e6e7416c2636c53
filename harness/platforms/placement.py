"""What a platform gives a run (`Placement`) and what the run asks of it (`PlacementRequest`):
every platform's `open_*` function (named in harness/config/platforms.py) takes the one and
returns the other. What the plan's fault kinds need beyond pods and brokers is one value,
`PlacementRequest.needs`, which each platform meets through its own table from need to
hook (`NeedHooks`: local.py's and docker.py's `NEED_HOOKS`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from faults.context import Brokers, FaultContext, GlobalTopic, Group, Links, Network, Storage
from faults.kinds import Need
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
    kafka_version: str  # the brokers' release
    # What the plan's fault kinds need beyond pods and brokers (faults.kinds.needs_of).
    needs: frozenset[Need] = field(default_factory=frozenset)


Made = TypeVar("Made")
# A platform's table from a need to what meets it: the hook adds to `Made` (what the
# platform builds its placement from). Every Need has an entry, a no-op where the
# platform needs to do nothing (tests/platform/test_placement_needs.py).
NeedHooks = Mapping[Need, Callable[[PlacementRequest, Made], None]]


def meet_needs(hooks: NeedHooks[Made], request: PlacementRequest, made: Made) -> Made:
    """`made` after the hook of each need of the request (in a fixed order)."""
    for need in sorted(request.needs):
        hooks[need](request, made)
    return made


def no_hook(request: PlacementRequest, made: object) -> None:
    """A need the platform meets as it is, or one it refused before the run."""


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
