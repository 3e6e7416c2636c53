"""SUT `kstreams`: the ledger app on Apache Kafka Streams, any release from 2.1 on that Maven
Central serves, built with Maven once per (release, sources) into the cache folder. One
source tree per API generation (`GENERATIONS`), chosen by the release: workloads/kstreams
(3.7 on) and workloads/kstreams-legacy (2.1 to 3.6), with the same topics, records, pod
flags and trace events, but for the events a generation cannot emit.

It speaks the pod flags of the Python worker; what it cannot take is the control-file
hook (the `delay-checkpoint` fault). Its trace says what Kafka Streams tells (client state,
restoration, standbys, task RUNNING, commits from the commit metric, dedup skips); the
checkpoint files are observed from outside (harness/run/statedir.py).
"""

from __future__ import annotations

import fcntl
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.config.run import RunConfig
from harness.errors import UsageError
from harness.kafka.jars import cache_root, require_java
from harness.maven import run_maven, sources_digest
from harness.sut.base import CONTAINER_APP_DIR, PodImage, PodPaths, PodSettings, refused_for

WORKLOADS = Path(__file__).resolve().parents[2] / "workloads"
APP_DIR = WORKLOADS / "kstreams"
# Sources every generation compiles (build-helper add-source in each pom).
COMMON_DIR = WORKLOADS / "kstreams-common"
POM = APP_DIR / "pom.xml"
MAIN_CLASS = "dev.kchaos.kstreams.LedgerApp"  # in every generation
KAFKA_STREAMS_HAS_NO_HOOK = "Kafka Streams has no such hook"
COMPLETE_MARKER = ".complete"
VERSION_PATTERN = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.]+)?$")


@dataclass(frozen=True)
class Generation:
    """One source tree of the ledger app and the releases it is built for: from `first` up
    to the next generation's first."""

    name: str
    app_dir: Path
    first: tuple[int, int]
    jar: str  # <artifactId>-<version>.jar of its pom
    cannot_trace: tuple[str, ...]  # trace events its releases give it no listener for
    agent: bool = False  # the jar is a Java agent too (its manifest's Premain-Class)

    @property
    def pom(self) -> Path:
        return self.app_dir / "pom.xml"


# Newest first. The boundaries are API ones: workloads/kstreams uses the StandbyUpdateListener
# (KIP-988, 3.7) and KStream#process returning a stream (KIP-820, 3.3); the legacy tree uses
# KStream#transform and the old processor.Processor, which 2.0 to 3.9 have (gone in 4.0).
# Below 2.1 nothing: Kafka 4 brokers refuse older clients (KIP-896).
GENERATIONS = (
    Generation("current", APP_DIR, (3, 7), "kchaos-kstreams-ledger-1.jar", ()),
    # restore-suspended too before 3.5 (no onRestoreSuspended): its app-config event says.
    # store-offsets: no store keeps its own offsets before 4.3 (KIP-1035); the current
    # tree writes it from 4.3 only. store-flush: RocksDB's event listeners are not in the
    # RocksDB of every release the tree builds.
    Generation("legacy", WORKLOADS / "kstreams-legacy", (2, 1),
               "kchaos-kstreams-ledger-legacy-1.jar",
               ("standby-update-start", "standby-update-suspended", "store-offsets",
                "store-flush"),
               agent=True),  # StateDirAgent: cleaner passes, locks, checkpoint reads
)
OLDEST = GENERATIONS[-1].first


def generation(version: str) -> Generation:
    """The source tree that builds Kafka Streams `version`; UsageError below 2.1."""
    if not VERSION_PATTERN.match(version):
        raise UsageError(f"--kstreams-version {version!r}: give a release like 4.1.2")
    for candidate in GENERATIONS:
        if release(version) >= candidate.first:
            return candidate
    oldest = ".".join(map(str, OLDEST))
    raise UsageError(
        f"--kstreams-version {version}: kchaos runs Kafka Streams {oldest} or later (Kafka 4 "
        f"brokers refuse older clients, KIP-896); give {oldest}.0 or a newer release"
    )


def require_served(version: str) -> None:
    """A release Maven Central does not serve, refused in one line before anything is
    built (Maven would fail later, in a log). The list is bisect's (harness/bisect/
    releases.py, cached); a release built here before, or a list that cannot be had,
    lets Maven decide."""
    if any(cache_root().glob(f"kstreams-app-{version}-*/{COMPLETE_MARKER}")):
        return
    from harness.kafka.releases import fetch_metadata, releases

    try:
        served = releases(fetch_metadata())
    except UsageError:
        return
    if served and version not in served:
        newest = ", ".join(served[-3:])
        raise UsageError(f"--kstreams-version {version}: Maven Central serves no such release "
                         f"of Kafka Streams (the newest: {newest}); give one it serves")


def release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def default_version() -> str:
    """The Kafka Streams release pinned in the app's pom.xml."""
    match = re.search(r"<kafka.streams.version>([^<]+)</kafka.streams.version>", POM.read_text())
    if match is None:
        raise UsageError(f"{POM} names no <kafka.streams.version>: restore it from git")
    return match.group(1)


@dataclass(frozen=True)
class Build:
    folder: Path
    seconds: float  # 0.0: taken from the cache
    jar: str = GENERATIONS[0].jar

    @property
    def jars(self) -> tuple[Path, ...]:
        """The app's jar first, then its dependencies."""
        return (self.folder / self.jar, *sorted((self.folder / "libs").glob("*.jar")))

    @property
    def classpath(self) -> str:
        return os.pathsep.join(str(j) for j in self.jars)


def build(version: str) -> Build:
    """The app built against Kafka Streams `version` from its generation's tree, building
    it the first time."""
    tree = generation(version)
    folder = cache_root() / f"kstreams-app-{version}-{sources_digest(tree.app_dir, COMMON_DIR)}"
    if (folder / COMPLETE_MARKER).exists():
        return Build(folder, 0.0, tree.jar)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".kstreams-app-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel runs: one builds, the others wait
        if (folder / COMPLETE_MARKER).exists():
            return Build(folder, 0.0, tree.jar)
        started = time.monotonic()
        run_maven(["-f", str(tree.pom), "package", f"-Dkafka.streams.version={version}",
                   f"-Dkchaos.build.dir={folder}"], folder / "build.log",
                  f"build the Kafka Streams {version} app",
                  f"is org.apache.kafka:kafka-streams:{version} on Maven Central?")
        seconds = round(time.monotonic() - started, 1)
        (folder / COMPLETE_MARKER).write_text(f"{version} {seconds} {tree.name}\n")
    return Build(folder, seconds, tree.jar)


# KIP-892's transactional state stores: Kafka Streams 4.4 has the setting, off by default.
TRANSACTIONAL_STORES_FIRST = (4, 4)
TRANSACTIONAL_STORES = "enable.transactional.statestores"


def ledger_app_args(config: RunConfig) -> tuple[str, ...]:
    """The ledger app's own flags: its windows (workloads/ledger/windowed.py) and its
    RocksDB write-buffer count (the config setter's), given only when not Kafka Streams'."""
    windows = config.windows
    args = ("--windows", windows.flag()) if windows is not None else ()
    if config.write_buffer_count != RunConfig.write_buffer_count:
        args = (*args, "--write-buffer-count", str(config.write_buffer_count))
    return args


def store_settings(config: RunConfig) -> tuple[str, ...]:
    """Kafka Streams settings the run's store settings stand for (the ledger app's and any
    app's)."""
    return (f"{TRANSACTIONAL_STORES}=true",) if config.transactional_stores else ()


def require_store_settings(config: RunConfig, version: str) -> None:
    """UsageError (254) for a store setting the release `version` does not have."""
    if config.transactional_stores and release(version) < TRANSACTIONAL_STORES_FIRST:
        raise UsageError(
            f"--set transactional_stores=true needs Kafka Streams 4.4 or newer (KIP-892); "
            f"--kstreams-version {version} has no {TRANSACTIONAL_STORES}")


class KafkaStreamsApp:
    name = "kstreams"
    refused_faults: Mapping[str, str] = refused_for({"worker-hook": KAFKA_STREAMS_HAS_NO_HOOK})
    watches_state_dirs = True

    @classmethod
    def from_config(cls, config: RunConfig) -> KafkaStreamsApp:
        sut = cls(config.kstreams_version or default_version(),
                  (*config.streams_config, *store_settings(config)), ledger_app_args(config))
        require_served(sut.version)
        require_store_settings(config, sut.version)
        if config.oracle and sut.generation is not GENERATIONS[0]:
            first = ".".join(map(str, GENERATIONS[0].first))
            raise UsageError(f"--oracle runs the reference with the launcher of Kafka Streams "
                             f"{first} or later: give --kstreams-version {first}.0 or newer")
        return sut

    def __init__(self, version: str, streams_config: tuple[str, ...] = (),
                 pod_args: tuple[str, ...] = ()) -> None:
        self.generation = generation(version)  # bad input: before a run folder exists
        self.version = version
        self.streams_config = streams_config
        self.pod_args = pod_args  # the ledger app's own flags (ledger_app_args)
        self._build: Build | None = None
        # Every check is judged from the topics, the app's trace and the observed state
        # directories. stale-checkpoint on every release: up to 4.2 its checkpoint-while-
        # RUNNING half from the observed .checkpoint files (its digest-at-init half finds
        # nothing: no task-init digests); from 4.3, which writes no .checkpoint files (the
        # stores keep their changelog offsets, KIP-1035), from what each store reports of
        # itself when its task turns RUNNING (the app's store-offsets lines, judged as a
        # task-init's digest: checker/checks/store_offsets.py).
        self.not_applicable: Mapping[str, str] = {}

    def prepare(self) -> None:
        require_java()
        self._build = build(self.version)

    @property
    def built(self) -> Build:
        if self._build is None:
            self.prepare()
        assert self._build is not None
        return self._build

    def command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        built = self.built
        return self._java(require_java(), built.classpath, settings, pod, paths,
                          str(built.jars[0]))

    def pod_image(self) -> PodImage:
        return PodImage("jvm", self.built.jars)

    def container_command(self, settings: PodSettings, pod: str, paths: PodPaths) -> list[str]:
        return self._java("java", f"{CONTAINER_APP_DIR}/*", settings, pod, paths,
                          f"{CONTAINER_APP_DIR}/{self.generation.jar}")

    def _java(self, java: str, classpath: str, settings: PodSettings, pod: str,
              paths: PodPaths, app_jar: str) -> list[str]:
        extra = [*self.pod_args,
                 *(arg for setting in self.streams_config for arg in ("--streams-config", setting))]
        agent = [f"-javaagent:{app_jar}"] if self.generation.agent else []
        return [java, "-Xms64m", "-Xmx384m", *agent, "-cp", classpath, MAIN_CLASS,
                *settings.argv(pod, paths), *extra]

    def env(self) -> dict[str, str]:
        return {}
