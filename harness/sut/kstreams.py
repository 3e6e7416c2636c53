"""SUT `kstreams`: the ledger app on Apache Kafka Streams (workloads/kstreams), any release
Maven Central serves, built with Maven once per (release, sources) into the cache folder.

It speaks the pod flags of the Python worker; what it cannot take is the control-file
hook (the `delay-checkpoint` fault). Its trace says what Kafka Streams tells (client state,
restoration, standbys, task RUNNING, commits from the commit metric, dedup skips); the
checkpoint files are observed from outside (harness/run/statedir.py).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.kafka.jars import cache_root, require_java, require_tool
from harness.sut.base import PodPaths, PodSettings

APP_DIR = Path(__file__).resolve().parents[2] / "workloads" / "kstreams"
POM = APP_DIR / "pom.xml"
MAIN_CLASS = "dev.kchaos.kstreams.LedgerApp"
COMPLETE_MARKER = ".complete"
VERSION_PATTERN = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.]+)?$")


def default_version() -> str:
    """The Kafka Streams release pinned in the app's pom.xml."""
    match = re.search(r"<kafka.streams.version>([^<]+)</kafka.streams.version>", POM.read_text())
    if match is None:
        raise UsageError(f"{POM} names no <kafka.streams.version>: restore it from git")
    return match.group(1)


def sources_digest() -> str:
    """Of the app's pom and sources: an edited app is never run from a stale build."""
    digest = hashlib.sha256()
    for path in sorted([POM, *(APP_DIR / "src").rglob("*")]):
        if path.is_file():
            digest.update(str(path.relative_to(APP_DIR)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def release(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


@dataclass(frozen=True)
class Build:
    folder: Path
    seconds: float  # 0.0: taken from the cache

    @property
    def classpath(self) -> str:
        app = self.folder / "kchaos-kstreams-ledger-1.jar"
        return os.pathsep.join(str(j) for j in [app, *sorted((self.folder / "libs").glob("*.jar"))])


def build(version: str) -> Build:
    """The app built against Kafka Streams `version`, building it the first time."""
    if not VERSION_PATTERN.match(version):
        raise UsageError(f"--kstreams-version {version!r}: give a release like 4.1.2")
    folder = cache_root() / f"kstreams-app-{version}-{sources_digest()}"
    if (folder / COMPLETE_MARKER).exists():
        return Build(folder, 0.0)
    mvn = require_tool("mvn", "install Maven (e.g. `apt-get install maven`) to build the app")
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".kstreams-app-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # parallel runs: one builds, the others wait
        if (folder / COMPLETE_MARKER).exists():
            return Build(folder, 0.0)
        started = time.monotonic()
        result = subprocess.run(
            [mvn, "-q", "-B", "-f", str(POM), "package", f"-Dkafka.streams.version={version}",
             f"-Dkchaos.build.dir={folder}"],
            capture_output=True, text=True,
        )
        (folder / "build.log").write_text(result.stdout + result.stderr)
        if result.returncode != 0:
            errors = [ln for ln in (result.stdout + result.stderr).splitlines() if "ERROR" in ln]
            first = (errors or ["no output"])[0].strip()[:300]
            raise UsageError(
                f"could not build the Kafka Streams {version} app ({first}); is "
                f"org.apache.kafka:kafka-streams:{version} on Maven Central? "
                f"log: {folder / 'build.log'}"
            )
        seconds = round(time.monotonic() - started, 1)
        (folder / COMPLETE_MARKER).write_text(f"{version} {seconds}\n")
    return Build(folder, seconds)


class KafkaStreamsApp:
    name = "kstreams"
    refused_faults: Mapping[str, str] = {
        "delay-checkpoint": "it works through the control file the Python worker reads; "
                            "Kafka Streams has no such hook",
    }
    watches_state_dirs = True

    def __init__(self, version: str, streams_config: tuple[str, ...] = ()) -> None:
        self.version = version
        self.streams_config = streams_config
        self._build: Build | None = None
        # Every check is judged from the topics, the app's trace and the observed state
        # directories (stale-checkpoint's digest-at-init half finds nothing: no task-init
        # digests; its checkpoint-while-RUNNING half is judged from the files) -- except
        # where the release writes no .checkpoint files at all.
        self.not_applicable: Mapping[str, str] = {}
        if release(version) >= (4, 3):
            self.not_applicable = {
                "stale-checkpoint": f"Kafka Streams {version} keeps changelog offsets inside "
                "the stores (KIP-1035), not in .checkpoint files: nothing to observe"}

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
        extra = [arg for setting in self.streams_config for arg in ("--streams-config", setting)]
        return [require_java(), "-Xms64m", "-Xmx384m", "-cp", self.built.classpath, MAIN_CLASS,
                *settings.argv(pod, paths), *extra]

    def env(self) -> dict[str, str]:
        return {}
