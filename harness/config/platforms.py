"""The platforms kchaos runs pods and brokers on, and what each one needs and can do.

Pure data, read by the run's settings (`--platform`'s choices and help), the checks made
before a run folder exists and the broad profiles' choice of fault kinds. A new platform is
its module in harness/platforms/, one entry here and its parts in `harness.platforms.PARTS`
(how it opens a run's placement, checks that it can run here, cleans what a crashed run
left; typed): the settings cannot import the platforms, which need them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from faults.kinds import STORAGE_FAULTS


@dataclass(frozen=True)
class PlatformKind:
    name: str
    summary: str  # a few words for --help
    unsupported_faults: frozenset[str] = frozenset()  # kinds it cannot apply at all
    # Where network faults act: the run's own namespaces (root, iproute2), the engine's
    # network, or nowhere (then they are in unsupported_faults).
    network: Literal["netns", "engine", "none"] = "none"
    brokers_need_java: bool = False  # its brokers are JVMs on this machine
    # Its pods need a Docker engine (the check itself is its preflight, harness.platforms'
    # PARTS; the settings read this to refuse what runs only on this machine's tree).
    needs_engine: bool = False


PLATFORMS: dict[str, PlatformKind] = {kind.name: kind for kind in (
    PlatformKind("local", "processes on this machine",
                 network="netns", brokers_need_java=True),
    # No tc on the containers' links yet, no fault filesystem under the engine's volumes.
    PlatformKind("docker", "containers",
                 unsupported_faults=frozenset({"netem"}) | STORAGE_FAULTS,
                 network="engine", needs_engine=True),
)}
DEFAULT_PLATFORM = "local"
