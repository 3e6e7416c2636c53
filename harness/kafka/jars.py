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


def kafka_version() -> str:
    """The Kafka release pinned in pom.xml."""
    match = re.search(r"<kafka.version>([^<]+)</kafka.version>", POM.read_text())
    if match is None:
        raise UsageError(f"{POM} names no <kafka.version>: restore it from git")
    return match.group(1)


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
            last = (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
            raise UsageError(
                f"could not fetch Kafka {version} jars with Maven ({last[0].strip()}): "
                "check that Maven Central is reachable"
            )
        (libs / COMPLETE_MARKER).write_text(version)
    return libs


def classpath(libs: Path) -> str:
    return os.pathsep.join(str(p) for p in sorted(libs.glob("*.jar")))
