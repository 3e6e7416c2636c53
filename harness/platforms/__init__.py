"""Where pods and brokers run: `local` processes (default), `docker` containers. Each is a
module here with an `open_*` function (PlacementRequest -> Placement, placement.py), named
with what it needs and can do in harness/config/platforms.py, and its parts in `PARTS`: that
function, the check that it can run on this machine, and the clean-up of what a crashed
run of it left (`kchaos clean`).

`open_platform` starts the brokers (unless the run attaches to a given bootstrap) and
returns the platform for the pods, the brokers' controls for the nemesis, the bootstrap
the harness uses, and a teardown for what it started.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from faults.kinds import Need, kinds_needing
from faults.plan import PLATFORM_KINDS
from harness.config.platforms import PLATFORMS, PlatformKind
from harness.errors import UsageError
from harness.platforms.clock import require_clock_shim
from harness.platforms.faultfs import require_faultfs
from harness.platforms.placement import Placement, PlacementRequest
from harness.procs import ProcessRegistry
from harness.sut.base import PodSettings, SystemUnderTest

__all__ = ["PARTS", "Placement", "PlacementRequest", "PlatformParts", "open_platform",
           "platform_kinds", "require_platform"]


@dataclass(frozen=True)
class PlatformParts:
    """A platform in code (what it can do is harness/config/platforms.py's data). Each part
    imports its module only when called: the docker SDK, the network namespaces."""

    open: Callable[[PlacementRequest], Placement]  # starts a run's brokers and pods
    preflight: Callable[[], None]  # UsageError (one line) when it cannot run here
    # What crashed runs of it left (run folders given), for `kchaos clean`: a line each.
    clean: Callable[[Sequence[Path]], list[str]]


def _open_local(request: PlacementRequest) -> Placement:
    from harness.platforms.local import open_local

    return open_local(request)


def _clean_local(folders: Sequence[Path]) -> list[str]:
    from harness.platforms.local_network import clean_networks

    removed = clean_networks(folders)  # `kchaos clean` stopped the processes inside first
    return [f"removed the run networks' {', '.join(removed)}"] if removed else []


def _open_docker(request: PlacementRequest) -> Placement:
    from harness.platforms.docker import open_docker

    return open_docker(request)


def _engine() -> None:
    from harness.platforms.docker_engine import require_engine

    require_engine()


def _clean_docker(folders: Sequence[Path]) -> list[str]:
    from harness.platforms.docker_engine import clean_runs

    removed = clean_runs({folder.name for folder in folders})
    return [f"removed the runs' containers, volumes and networks {', '.join(removed)}"
            ] if removed else []


def _nothing() -> None:
    return None


PARTS: dict[str, PlatformParts] = {
    "local": PlatformParts(_open_local, _nothing, _clean_local),
    "docker": PlatformParts(_open_docker, _engine, _clean_docker),
}


def open_platform(
    name: str, run_dir: Path, registry: ProcessRegistry, sut: SystemUnderTest,
    settings: PodSettings, nodes: int, brokers: int, bootstrap: str | None,
    needs: frozenset[Need] = frozenset(), kafka_version: str | None = None,
) -> Placement:
    """`needs`: what the plan's fault kinds need beyond pods and brokers, which the
    platform meets through its table of hooks (its `NEED_HOOKS`). `kafka_version`: the
    brokers' release (default: harness/kafka/pom.xml's)."""
    from harness.kafka.jars import kafka_version as pinned_kafka_version

    request = PlacementRequest(run_dir, registry, sut, settings, nodes, brokers, bootstrap,
                               kafka_version or pinned_kafka_version(), needs)
    return PARTS[name].open(request)


def platform_kinds(name: str, bootstrap: str | None = None) -> frozenset[str]:
    """The kinds of faults.plan.PLATFORM_KINDS a run on platform `name` can apply on this
    machine: what the broad profiles draw from (a missing prerequisite leaves its kinds
    out rather than failing the run; the plan records what was drawn from)."""
    kinds = set(PLATFORM_KINDS) - PLATFORMS[name].unsupported_faults
    for need, require in _requirements(name, bootstrap).items():
        if kinds & kinds_needing(need) and not _met(require):
            kinds -= kinds_needing(need)
    return frozenset(kinds)


def _requirements(name: str, bootstrap: str | None) -> dict[Need, Callable[[], None]]:
    """The check of each need a platform meets only on some machines (UsageError saying
    why not): the others (the worker's hook, the ledger) are the system under test's."""
    kind = PLATFORMS[name]
    return {Need.STORAGE: require_faultfs, Need.CLOCK: require_clock_shim,
            Need.NETWORK: lambda: _require_network(kind, bootstrap)}


def _met(require: Callable[[], None]) -> bool:
    """Whether a `require_*` check passes here (it raises UsageError saying why not)."""
    try:
        require()
    except UsageError:
        return False
    return True


def _require_network(kind: PlatformKind, bootstrap: str | None) -> None:
    if kind.network != "netns":
        return
    # With a given bootstrap the brokers are not the run's: it has no network of its own.
    if bootstrap is not None:
        raise UsageError("network faults need the run's own brokers in its own network: "
                         "drop --bootstrap, or use a profile without them")
    from harness.platforms.netns import require_netns

    require_netns()


def require_platform(name: str, faults: Iterable[str] = (), bootstrap: str | None = None
                     ) -> None:
    """Fail at once, before a run folder exists, if the platform cannot run here or cannot
    apply one of the plan's fault kinds."""
    kind = PLATFORMS[name]
    kinds = set(faults)
    refused = sorted(kinds & kind.unsupported_faults)
    if refused:
        others = [k.name for k in PLATFORMS.values() if not set(refused) & k.unsupported_faults]
        raise UsageError(f"--platform {name} cannot apply {', '.join(refused)}: use "
                         f"{' or '.join(f'--platform {o}' for o in others) or 'no platform'}"
                         ", or a profile without it")
    for need, require in _requirements(name, bootstrap).items():
        if kinds & kinds_needing(need):
            require()
    PARTS[name].preflight()
