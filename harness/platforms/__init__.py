"""Where pods and brokers run: `local` processes (default), `docker` containers.

`open_platform` starts the brokers (unless the run attaches to a given bootstrap) and
returns the platform for the pods, the brokers' controls for the nemesis, the bootstrap
the harness uses, and a teardown for what it started.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from faults.kinds import Brokers, Network, Storage
from faults.platform import Platform
from harness.errors import UsageError
from harness.platforms.faultfs import STORAGE_FAULTS, FaultFsMounts, require_faultfs
from harness.procs import ProcessRegistry
from harness.sut.base import PodSettings, SystemUnderTest

# Fault kinds a platform cannot apply (local processes share the host's network).
UNSUPPORTED_FAULTS = {"local": {"partition"}, "docker": set(STORAGE_FAULTS)}


@dataclass
class Placement:
    platform: Platform
    brokers: Brokers | None
    bootstrap: str
    teardown: Callable[[], None]
    network: Network | None = None
    storage: Storage | None = None


def open_platform(
    name: str, run_dir: Path, registry: ProcessRegistry, sut: SystemUnderTest,
    settings: PodSettings, nodes: int, brokers: int, bootstrap: str | None,
    storage_faults: bool = False,
) -> Placement:
    """`storage_faults`: the plan has one, so the pods' volumes go on the fault filesystem."""
    if name == "docker":
        return _docker(run_dir, settings, nodes, brokers)
    from harness.kafka.cluster import KafkaCluster
    from harness.platforms.local import LocalPlatform

    cluster = None
    if bootstrap is None:
        cluster = KafkaCluster(run_dir, registry, size=brokers)
        cluster.start()
        bootstrap = cluster.bootstrap
    platform = LocalPlatform(
        run_dir, registry, sut, replace(settings, bootstrap=bootstrap), nodes,
        FaultFsMounts(registry) if storage_faults else None,
    )
    def teardown() -> None:
        try:
            platform.teardown()  # the pods first: they talk to the brokers
        finally:
            if cluster is not None:
                cluster.stop()  # all brokers at once: a lone survivor waits out its grace

    return Placement(platform, cluster, bootstrap, teardown,
                     storage=platform if storage_faults else None)


def require_platform(name: str, sut: str = "python", faults: Iterable[str] = ()) -> None:
    """Fail at once, before a run folder exists, if the platform cannot run here, cannot
    run the SUT, or cannot apply one of the plan's fault kinds."""
    if name == "docker" and sut != "python":
        raise UsageError(f"--sut {sut} runs on --platform local only (its image is not built)")
    kinds = set(faults)
    refused = sorted(kinds & UNSUPPORTED_FAULTS.get(name, set()))
    if refused:
        other = "local" if set(refused) <= STORAGE_FAULTS else "docker"
        raise UsageError(f"--platform {name} cannot apply {', '.join(refused)}: "
                         f"use --platform {other}, or a profile without it")
    if kinds & STORAGE_FAULTS:
        require_faultfs()
    if name == "docker":
        from harness.platforms.docker import require_engine

        require_engine()


def _docker(run_dir: Path, settings: PodSettings, nodes: int, brokers: int) -> Placement:
    from harness.platforms.docker import DockerKafka, DockerPlatform, cleanup_run
    from harness.platforms.docker_network import DockerNetwork

    kafka = DockerKafka(run_dir, run_dir.name, brokers)
    try:
        kafka.start()
        platform = DockerPlatform(
            run_dir, replace(settings, bootstrap=kafka.internal_bootstrap), nodes,
            run_id=run_dir.name, bootstrap=kafka.internal_bootstrap, network=kafka.network,
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
