"""The platforms kchaos runs pods and brokers on, and what each one needs and can do.

Pure data, read by the run's settings (`--platform`'s choices and help), the checks made
before a run folder exists, the broad profiles' choice of fault kinds and the nightly (which
cells need an engine): a new platform is its module in harness/platforms/ and one entry
here. `implementation` names the function that `open_platform` (harness/platforms) imports
to start a run's placement: the settings cannot import the platforms, which need them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from faults.kinds import STORAGE_FAULTS


@dataclass(frozen=True)
class PlatformKind:
    name: str
    implementation: str  # "module:function" taking a PlacementRequest, giving a Placement
    summary: str  # a few words for --help
    unsupported_faults: frozenset[str] = frozenset()  # kinds it cannot apply at all
    # Where network faults act: the run's own namespaces (root, iproute2), the engine's
    # network, or nowhere (then they are in unsupported_faults).
    network: Literal["netns", "engine", "none"] = "none"
    brokers_need_java: bool = False  # its brokers are JVMs on this machine
    needs_engine: bool = False  # a Docker engine that answers


PLATFORMS: dict[str, PlatformKind] = {kind.name: kind for kind in (
    PlatformKind("local", "harness.platforms.local:open_local", "processes on this machine",
                 network="netns", brokers_need_java=True),
    # No tc on the containers' links yet, no fault filesystem under the engine's volumes.
    PlatformKind("docker", "harness.platforms.docker:open_docker", "containers",
                 unsupported_faults=frozenset({"netem"}) | STORAGE_FAULTS,
                 network="engine", needs_engine=True),
)}
DEFAULT_PLATFORM = "local"
