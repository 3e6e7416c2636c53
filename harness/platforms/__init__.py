"""Where pods and brokers run: `local` processes (default), `docker` containers.

`open_platform` starts the brokers (unless the run attaches to a given bootstrap) and
returns the platform for the pods, the brokers' controls for the nemesis, the bootstrap
the harness uses, and a teardown for what it started. On `local`, a plan with network
faults gets a network of its own first (local_network.py); without, 127.0.0.1 as ever.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from faults.kinds import NETWORK_FAULTS, Brokers, Links, Network, Storage
from faults.plan import PLATFORM_KINDS
from faults.platform import Platform
from harness.errors import UsageError
from harness.platforms.faultfs import STORAGE_FAULTS, FaultFsMounts, require_faultfs
from harness.procs import ProcessRegistry
from harness.sut.base import PodSettings, SystemUnderTest

# Fault kinds a platform cannot apply (docker: no tc on the containers' links yet, no
# fault filesystem).
UNSUPPORTED_FAULTS: dict[str, set[str]] = {"local": set(), "docker": {"netem", *STORAGE_FAULTS}}


@dataclass
class Placement:
    platform: Platform
    brokers: Brokers | None
    bootstrap: str
    teardown: Callable[[], None]
    network: Network | None = None
    links: Links | None = None
    storage: Storage | None = None


def open_platform(
    name: str, run_dir: Path, registry: ProcessRegistry, sut: SystemUnderTest,
    settings: PodSettings, nodes: int, brokers: int, bootstrap: str | None,
    own_network: bool = False, storage_faults: bool = False,
    kafka_version: str | None = None,
) -> Placement:
    """`own_network`: the plan has network faults (local: namespaces, bridge, veths).
    `storage_faults`: the plan has one, so the pods' volumes go on the fault filesystem.
    `kafka_version`: the brokers' release (default: harness/kafka/pom.xml's)."""
    from harness.kafka.jars import kafka_version as pinned_kafka_version

    kafka_version = kafka_version or pinned_kafka_version()
    if name == "docker":
        return _docker(run_dir, sut, settings, nodes, brokers, kafka_version)
    from harness.kafka.cluster import KafkaCluster
    from harness.platforms.local import LocalPlatform
    from harness.platforms.local_network import RunNetwork

    network = RunNetwork(run_dir, registry) if own_network and bootstrap is None else None
    cluster = None
    try:
        if network is not None:
            network.create()
        if bootstrap is None:
            cluster = KafkaCluster(run_dir, registry, size=brokers, network=network,
                                   version=kafka_version)
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
        run_dir, registry, sut, replace(settings, bootstrap=bootstrap), nodes, network,
        FaultFsMounts(registry) if storage_faults else None,
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
                     storage=platform if storage_faults else None)


def platform_kinds(name: str, bootstrap: str | None = None) -> frozenset[str]:
    """The kinds of faults.plan.PLATFORM_KINDS a run on platform `name` can apply on this
    machine: what the broad profiles draw from (a missing prerequisite leaves its kinds
    out rather than failing the run; the plan records what was drawn from)."""
    kinds = set(PLATFORM_KINDS) - UNSUPPORTED_FAULTS.get(name, set())
    if kinds & STORAGE_FAULTS and not _met(require_faultfs):
        kinds -= STORAGE_FAULTS
    if name == "local" and kinds & NETWORK_FAULTS:
        from harness.platforms.netns import require_netns

        # With a given bootstrap the brokers are not the run's: it has no network of its own.
        if bootstrap is not None or not _met(require_netns):
            kinds -= NETWORK_FAULTS
    return frozenset(kinds)


def _met(require: Callable[[], None]) -> bool:
    """Whether a `require_*` check passes here (it raises UsageError saying why not)."""
    try:
        require()
    except UsageError:
        return False
    return True


def require_platform(name: str, sut: str = "python", faults: Iterable[str] = (),
                     bootstrap: str | None = None) -> None:
    """Fail at once, before a run folder exists, if the platform cannot run here, cannot
    run the SUT, or cannot apply one of the plan's fault kinds."""
    kinds = set(faults)
    refused = sorted(kinds & UNSUPPORTED_FAULTS.get(name, set()))
    if refused:
        raise UsageError(f"--platform {name} cannot apply {', '.join(refused)}: "
                         "use --platform local, or a profile without it")
    if kinds & STORAGE_FAULTS:
        require_faultfs()
    if name == "local" and kinds & NETWORK_FAULTS:
        if bootstrap is not None:
            raise UsageError("network faults need the run's own brokers in its own network: "
                             "drop --bootstrap, or use a profile without them")
        from harness.platforms.netns import require_netns

        require_netns()
    if name == "docker":
        from harness.platforms.docker import require_engine

        require_engine()


def _docker(run_dir: Path, sut: SystemUnderTest, settings: PodSettings, nodes: int,
            brokers: int, kafka_version: str) -> Placement:
    from harness.platforms.docker import DockerKafka, DockerPlatform, cleanup_run
    from harness.platforms.docker_network import DockerNetwork

    kafka = DockerKafka(run_dir, run_dir.name, brokers, version=kafka_version)
    try:
        kafka.start()
        platform = DockerPlatform(
            run_dir, replace(settings, bootstrap=kafka.internal_bootstrap), nodes,
            run_id=run_dir.name, bootstrap=kafka.internal_bootstrap, network=kafka.network,
            sut=sut,
        )
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
