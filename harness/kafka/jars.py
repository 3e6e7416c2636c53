"""Kafka jars from Maven Central, fetched once per version into a cache folder."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path

from harness.errors import UsageError

POM = Path(__file__).with_name("pom.xml")
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
COMPLETE_MARKER = ".complete"
VERSION_PATTERN = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-[A-Za-z0-9.]+)?$")
# The oldest broker kchaos starts (`--kafka-version`): KRaft only, and the harness's own
# readiness probe, kafka-python's describe_cluster, reads DescribeCluster v1 fields
# (endpoint_type, KIP-919) that brokers before 3.7 do not send (tried: 3.3.2 and 3.6.2
# start, then every probe fails with KeyError 'endpoint_type'; 3.7.2 and 3.9.1 run).
OLDEST_BROKER = (3, 7)


def kafka_version() -> str:
    """The Kafka release pinned in pom.xml."""
    match = re.search(r"<kafka.version>([^<]+)</kafka.version>", POM.read_text())
    if match is None:
        raise UsageError(f"{POM} names no <kafka.version>: restore it from git")
    return match.group(1)


def kafka_release_refusal(version: str) -> str | None:
    """Why kchaos cannot start brokers of `version` (None: it can, as far as the text
    says): a release string, 3.7 or newer. Whether Maven Central serves it is known at the
    fetch (`kafka_libs`)."""
    if not VERSION_PATTERN.match(version):
        return f"give a Kafka release like {kafka_version()}"
    major, minor = (int(part) for part in version.split(".")[:2])
    if (major, minor) < OLDEST_BROKER:
        oldest = ".".join(map(str, OLDEST_BROKER))
        return (f"kchaos starts KRaft brokers from Kafka {oldest} on (older ones lack the "
                "DescribeCluster fields its readiness probe reads); give "
                f"{oldest}.0 or a newer release")
    return None


def release_shown(version: str) -> str:
    """`version` as a refusal shows it: quoted unless it has a release's shape (what was
    typed may be anything)."""
    return version if VERSION_PATTERN.match(version) else repr(version)


def check_kafka_version(version: str) -> str:
    """`--kafka-version`'s value, or UsageError (one line) saying why not (the run setting
    `kafka_version` refuses the same, with the same words: harness/config/run.py)."""
    reason = kafka_release_refusal(version)
    if reason is not None:
        raise UsageError(f"--kafka-version {release_shown(version)}: {reason}")
    return version


def cache_root() -> Path:
    return Path(os.environ.get("KCHAOS_CACHE", Path.home() / ".cache" / "kchaos"))


def require_tool(name: str, hint: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise UsageError(f"`{name}` not found on PATH: {hint}")
    return path


def require_java() -> str:
    return require_tool("java", "install a JDK 17+ (e.g. `apt-get install openjdk-17-jdk`)")


def kafka_cache(version: str | None = None) -> Path:
    """The cache folder of one Kafka version: its jars, class archive, storage templates."""
    return cache_root() / f"kafka-{version or kafka_version()}"


def kafka_libs(version: str | None = None) -> Path:
    """The folder of jars for `version`, fetching it with Maven the first time."""
    version = version or kafka_version()
    libs = kafka_cache(version) / "libs"
    if (libs / COMPLETE_MARKER).exists():
        return libs
    mvn = require_tool("mvn", "install Maven (e.g. `apt-get install maven`) to fetch Kafka jars")
    libs.mkdir(parents=True, exist_ok=True)
    # Several test sessions may start at once: one fetches, the others wait.
    with open(libs.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (libs / COMPLETE_MARKER).exists():
            return libs
        result = subprocess.run(
            [
                mvn, "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                f"-Dkafka.version={version}", f"-DoutputDirectory={libs}",
                "-DincludeScope=runtime",
            ],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            shutil.rmtree(libs, ignore_errors=True)  # a mistyped version leaves no jars folder
            output = result.stdout + result.stderr
            if "kafka_2.13:jar:" in output and ("Could not find" in output
                                                or "was not found" in output):
                raise UsageError(
                    f"Kafka {version}: Maven Central serves no "
                    f"org.apache.kafka:kafka_2.13:{version}; give a released version "
                    f"(e.g. {kafka_version()} or 3.9.1) as --kafka-version"
                )
            last = output.strip().splitlines()[-1:] or ["no output"]
            raise UsageError(
                f"could not fetch Kafka {version} jars with Maven ({last[0].strip()}): "
                f"check that Maven Central is reachable and serves "
                f"org.apache.kafka:kafka_2.13:{version}"
            )
        (libs / COMPLETE_MARKER).write_text(version)
    return libs


def classpath(libs: Path) -> str:
    return os.pathsep.join(str(p) for p in sorted(libs.glob("*.jar")))
